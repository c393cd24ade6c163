// fio's JSON output (--output-format=json / json+), key for key with fio
// 3.33's types: integers stay integers, means and deviations are doubles.

#include <ctime>

#include "bench/fio_format.h"
#include "bench/report.h"
#include "bench/view.h"
#include "stats/registry.h"

namespace arcstore::bench {
namespace {

using nlohmann::ordered_json;

ordered_json LatJson(const RunningStat& s) {
  ordered_json j;
  j["min"] = static_cast<uint64_t>(s.min());
  j["max"] = static_cast<uint64_t>(s.max());
  j["mean"] = s.mean();
  j["stddev"] = s.stddev();
  j["N"] = s.n();
  return j;
}

ordered_json DirJson(const JobResult& r, Dir d, uint64_t group_agg_bw, bool plus) {
  const DirStats& s = r.dirs[d];
  ordered_json j;
  const uint64_t bw = BwBytesPerSec(s);
  j["io_bytes"] = s.io_bytes;
  j["io_kbytes"] = s.io_bytes / 1024;
  j["bw_bytes"] = bw;
  j["bw"] = bw / 1024;
  j["iops"] = Iops(s);
  j["runtime"] = s.runtime_ms;
  j["total_ios"] = s.total_ios;
  j["short_ios"] = 0;
  j["drop_ios"] = 0;
  j["slat_ns"] = LatJson(s.slat_ns);
  ordered_json clat = LatJson(s.clat_ns);
  if (s.clat_hist.total() > 0 && r.job != nullptr) {
    std::vector<uint64_t> v = s.clat_hist.Percentiles(r.job->percentile_list);
    ordered_json p;
    for (size_t i = 0; i < v.size(); i++) p[StrFormat("%f", r.job->percentile_list[i])] = v[i];
    clat["percentile"] = p;
    if (plus) {
      ordered_json bins;
      for (int i = 0; i < PlatHistogram::kBuckets; i++) {
        if (s.clat_hist.count(i) != 0) bins[std::to_string(PlatHistogram::ValueOf(i))] = s.clat_hist.count(i);
      }
      clat["bins"] = bins;
    }
  }
  j["clat_ns"] = clat;
  j["lat_ns"] = LatJson(s.lat_ns);
  const RunningStat& b = s.bw_kib_samples;
  double agg = 0;
  if (b.n() > 0) agg = group_agg_bw / 1024 ? std::min(100.0, b.mean() * 100.0 / static_cast<double>(group_agg_bw / 1024)) : 100.0;
  j["bw_min"] = static_cast<uint64_t>(b.min());
  j["bw_max"] = static_cast<uint64_t>(b.max());
  j["bw_agg"] = agg;
  j["bw_mean"] = b.mean();
  j["bw_dev"] = b.stddev();
  j["bw_samples"] = b.n();
  const RunningStat& i = s.iops_samples;
  j["iops_min"] = static_cast<uint64_t>(i.min());
  j["iops_max"] = static_cast<uint64_t>(i.max());
  j["iops_mean"] = i.mean();
  j["iops_stddev"] = i.stddev();
  j["iops_samples"] = i.n();
  return j;
}

template <size_t N>
ordered_json BandJson(const std::array<uint64_t, N>& c, const char* const* labels, uint64_t total) {
  ordered_json j;
  for (size_t i = 0; i < N; i++) {
    double pct = total ? static_cast<double>(c[i]) * 100.0 / static_cast<double>(total) : 0.0;
    if (c[i] != 0 && pct < 0.01) pct = 0.01;
    j[labels[i]] = pct;
  }
  return j;
}

ordered_json DistJson(const std::array<uint64_t, 7>& c, const char* const* labels) {
  uint64_t total = 0;
  for (uint64_t v : c) total += v;
  ordered_json j;
  for (size_t i = 0; i < c.size(); i++) {
    j[labels[i]] = total ? static_cast<double>(c[i]) * 100.0 / static_cast<double>(total) : 0.0;
  }
  return j;
}

ordered_json ArcstoreJobJson(const JobResult& r) {
  ordered_json a;
  a["volumes"] = r.volume_names;
  a["jobs_folded"] = r.jobs;
  if (r.job != nullptr) {
    a["ioengine_requested"] = r.job->ioengine;
    a["note"] = "run in-process by arcstore bench: ioengine is not used; direct and invalidate apply to plain-file targets only";
  }
  if (r.error != 0) a["error_text"] = r.error_text;
  if (r.job != nullptr && r.job->verify != VerifyKind::kNone) {
    a["verify"] = {{"blocks", r.verified_blocks},
                   {"errors", r.verify_errors},
                   {"first_error", r.first_verify_error}};
  }
  if (r.arcstore_delta) a["view"] = BuildView(r, r.region_bytes).ToJson();
  if (r.arcstore_series) {
    const StatsSeries& ser = *r.arcstore_series;
    a["series"] = {{"t_ms", ser.t_ms},
                   {"arc_size", ser.arc_size},
                   {"arc_c", ser.arc_c},
                   {"dirty_bytes", ser.dirty_bytes},
                   {"dirty_max_bytes", ser.dirty_max_bytes}};
  }
  if (r.arcstore_delta) a["stats_delta"] = ordered_json::parse(stats::ToJson(*r.arcstore_delta, -1));
  if (r.machine_stalls) {
    const MachineStalls& s = *r.machine_stalls;
    ordered_json events = ordered_json::array();
    for (const StallEvent& e : s.events) events.push_back({e.at_ns / 1000000, e.duration_ns / 1000});
    a["machine_stalls"] = {{"threshold_us", s.threshold_ns / 1000},
                           {"watched_ms", s.watched_ns / 1000000},
                           {"stalls", s.stalls},
                           {"stall_us", s.stall_ns / 1000},
                           {"worst_us", s.worst_ns / 1000},
                           {"slow_ios", r.slow_ios.size()},
                           {"slow_ios_during_stalls", IosDuringStalls(s, r.slow_ios)},
                           {"events_ms_us", events}};
  }
  return a;
}

ordered_json JobJson(const RunResult& run, const JobResult& r, bool plus) {
  const GroupResult* g = nullptr;
  for (const auto& gr : run.groups) {
    if (gr.groupid == r.groupid) g = &gr;
  }
  ordered_json j;
  j["jobname"] = r.name;
  j["groupid"] = r.groupid;
  j["error"] = r.error;
  j["eta"] = 0;
  j["elapsed"] = (r.job_runtime_ms + 999) / 1000;
  ordered_json opts = ordered_json::object();
  if (r.job != nullptr) {
    for (const auto& [k, v] : r.job->written) opts[k] = v;
  }
  j["job options"] = opts;
  for (int d = 0; d < kNumDirs; d++) {
    j[DirName(static_cast<Dir>(d))] = DirJson(r, static_cast<Dir>(d), g ? g->agg_bw[d] : 0, plus);
  }
  j["sync"] = {{"total_ios", r.sync_ios}, {"lat_ns", LatJson(r.sync_lat_ns)}};
  j["job_runtime"] = r.job_runtime_ms;
  j["usr_cpu"] = r.usr_cpu_pct;
  j["sys_cpu"] = r.sys_cpu_pct;
  j["ctx"] = r.ctx;
  j["majf"] = r.majf;
  j["minf"] = r.minf;
  static const char* const kDepth[] = {"1", "2", "4", "8", "16", "32", ">=64"};
  static const char* const kBatch[] = {"0", "4", "8", "16", "32", "64", ">=64"};
  j["iodepth_level"] = DistJson(r.depths.depth, kDepth);
  j["iodepth_submit"] = DistJson(r.depths.submit, kBatch);
  j["iodepth_complete"] = DistJson(r.depths.complete, kBatch);
  j["latency_ns"] = BandJson(r.lat_bands.ns, LatencyBands::Labels().data(), r.lat_bands.total);
  j["latency_us"] = BandJson(r.lat_bands.us, LatencyBands::Labels().data(), r.lat_bands.total);
  j["latency_ms"] = BandJson(r.lat_bands.ms, LatencyBands::MsLabels().data(), r.lat_bands.total);
  j["latency_depth"] = r.job != nullptr ? r.job->iodepth : 1;
  j["latency_target"] = 0;
  j["latency_percentile"] = 100.0;
  j["latency_window"] = 0;
  j["arcstore"] = ArcstoreJobJson(r);
  return j;
}

}  // namespace

Result<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text == "normal") return OutputFormat::kNormal;
  if (text == "json") return OutputFormat::kJson;
  if (text == "json+") return OutputFormat::kJsonPlus;
  return Status::InvalidArgument("output format '" + std::string(text) + "': normal, json or json+");
}

nlohmann::ordered_json ToFioJson(const RunResult& run, bool plus) {
  ordered_json top;
  top["fio version"] = BenchVersionString();
  top["timestamp"] = run.timestamp_unix_s;
  top["timestamp_ms"] = run.timestamp_unix_ms;
  time_t t = static_cast<time_t>(run.timestamp_unix_s);
  char buf[64];
  struct tm tm;
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Y", &tm);
  top["time"] = buf;
  if (!run.global_written.empty()) {
    ordered_json g;
    for (const auto& [k, v] : run.global_written) g[k] = v;
    top["global options"] = g;
  }
  ordered_json jobs = ordered_json::array();
  for (const JobResult& r : run.jobs) jobs.push_back(JobJson(run, r, plus));
  top["jobs"] = jobs;
  top["arcstore"] = {{"generator", "arcstore bench"},
                     {"format", "fio 3.33 JSON; arcstore's own view under \"arcstore\" keys"}};
  return top;
}

std::string FormatJson(const RunResult& run, bool plus) {
  return ToFioJson(run, plus).dump(2) + "\n";
}

}  // namespace arcstore::bench
