// fio's normal text output (stat.c's show_thread_status and
// show_run_stats layouts), reproduced from its output format.

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "bench/fio_format.h"
#include "bench/report.h"
#include "bench/view.h"

namespace arcstore::bench {
namespace {

std::string BsRangeText(const Job& j, Dir d) {
  uint64_t lo = j.MinBlockBytes(d), hi = j.bs_bytes[d];
  if (!j.bssplit[d].empty()) {
    hi = 0;
    for (const auto& e : j.bssplit[d]) hi = std::max(hi, e.bs_bytes);
  } else if (j.bsrange[d].min_bytes != 0) {
    hi = j.bsrange[d].max_bytes;
  }
  return Num2Str(lo, 4, true, N2SUnit::kBytes) + "-" + Num2Str(hi, 4, true, N2SUnit::kBytes);
}

void ShowLat(std::string* out, const char* name, const RunningStat& s) {
  if (s.n() == 0) return;
  uint64_t min = static_cast<uint64_t>(s.min()), max = static_cast<uint64_t>(s.max());
  double mean = s.mean(), dev = s.stddev();
  const char* base = "(nsec)";
  if (min > 2000000 && max > 99999999ull && dev > 1000000.0) {
    min /= 1000000;
    max /= 1000000;
    mean /= 1e6;
    dev /= 1e6;
    base = "(msec)";
  } else if (min > 2000 && max > 99999 && dev > 1000.0) {
    min /= 1000;
    max /= 1000;
    mean /= 1e3;
    dev /= 1e3;
    base = "(usec)";
  }
  *out += StrFormat("    %s %s: min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", name, base,
                    Num2Str(min, 6, false, N2SUnit::kNone).c_str(),
                    Num2Str(max, 6, false, N2SUnit::kNone).c_str(), mean, dev);
}

void ShowPercentiles(std::string* out, const DirStats& s, const std::vector<double>& plist) {
  if (s.clat_hist.total() == 0 || plist.empty()) return;
  std::vector<uint64_t> v = s.clat_hist.Percentiles(plist);
  uint64_t minv = *std::min_element(v.begin(), v.end());
  uint64_t maxv = *std::max_element(v.begin(), v.end());
  int scale_down = 0;
  uint64_t divisor = 1;
  const char* unit = "nsec";
  if (minv > 2000000 && maxv > 99999999ull) {
    scale_down = 2;
    divisor = 1000000;
    unit = "msec";
  } else if (minv > 2000 && maxv > 99999) {
    scale_down = 1;
    divisor = 1000;
    unit = "usec";
  }
  int width = std::max(5, static_cast<int>(std::log10(static_cast<double>(std::max<uint64_t>(1, maxv / divisor))) + 1));
  *out += StrFormat("    clat percentiles (%s):\n     |", unit);
  const size_t per_line = 4;
  for (size_t j = 0; j < v.size(); j++) {
    if (j != 0 && j % per_line == 0) *out += "     |";
    uint64_t val = v[j];
    for (int i = 0; i < scale_down; i++) val = (val + 999) / 1000;
    bool last = j == v.size() - 1;
    *out += StrFormat(" %5.2fth=[%*llu]%c", plist[j], width, static_cast<unsigned long long>(val),
                      last ? '\n' : ',');
    if (!last && j % per_line == per_line - 1) *out += "\n";
  }
}

void ShowDir(std::string* out, const JobResult& r, Dir d, uint64_t group_agg_bw) {
  const DirStats& s = r.dirs[d];
  uint64_t bw = BwBytesPerSec(s);
  *out += StrFormat("  %s: IOPS=%s, BW=%s (%s)(%s/%llumsec)%s\n", DirName(d),
                    Num2Str(static_cast<uint64_t>(Iops(s)), 4, false, N2SUnit::kNone).c_str(),
                    Num2Str(bw, 4, true, N2SUnit::kBytesPerSec).c_str(),
                    Num2Str(bw, 4, false, N2SUnit::kBytesPerSec).c_str(),
                    Num2Str(s.io_bytes, 4, true, N2SUnit::kBytes).c_str(),
                    static_cast<unsigned long long>(s.runtime_ms),
                    d == kWrite ? "; 0 zone resets" : "");
  ShowLat(out, "slat", s.slat_ns);
  ShowLat(out, "clat", s.clat_ns);
  ShowLat(out, " lat", s.lat_ns);
  ShowPercentiles(out, s, r.job != nullptr ? r.job->percentile_list : std::vector<double>{});
  const RunningStat& b = s.bw_kib_samples;
  if (b.n() > 0) {
    double pct = 100.0;
    if (group_agg_bw / 1024 > 0) pct = std::min(100.0, b.mean() * 100.0 / static_cast<double>(group_agg_bw / 1024));
    double min = b.min(), max = b.max(), mean = b.mean(), dev = b.stddev();
    const char* unit = "KiB";
    if (mean > 1024.0 * 1024.0) {
      min /= 1024;
      max /= 1024;
      mean /= 1024;
      dev /= 1024;
      unit = "MiB";
    }
    *out += StrFormat("   bw (%5s/s): min=%5llu, max=%5llu, per=%3.2f%%, avg=%5.02f, stdev=%5.02f, samples=%llu\n",
                      unit, static_cast<unsigned long long>(min), static_cast<unsigned long long>(max),
                      pct, mean, dev, static_cast<unsigned long long>(b.n()));
  }
  const RunningStat& i = s.iops_samples;
  if (i.n() > 0) {
    *out += StrFormat("   iops        : min=%5llu, max=%5llu, avg=%5.02f, stdev=%5.02f, samples=%llu\n",
                      static_cast<unsigned long long>(i.min()), static_cast<unsigned long long>(i.max()),
                      i.mean(), i.stddev(), static_cast<unsigned long long>(i.n()));
  }
}

template <size_t N>
void ShowBands(std::string* out, const char* unit, const std::array<uint64_t, N>& counts,
               const char* const* labels, uint64_t total) {
  int shown = 0;
  for (size_t i = 0; i < N; i++) {
    if (counts[i] == 0 || total == 0) continue;
    double pct = std::max(0.01, static_cast<double>(counts[i]) * 100.0 / static_cast<double>(total));
    if (shown % 5 == 0) *out += StrFormat("%s  lat (%s)   : ", shown ? "\n" : "", unit);
    *out += StrFormat("%s%s=%3.2f%%", shown % 5 ? ", " : "", labels[i], pct);
    shown++;
  }
  if (shown) *out += "\n";
}

std::string DepthLine(const char* head, const std::array<uint64_t, 7>& c, const char* const* labels) {
  uint64_t total = 0;
  for (uint64_t v : c) total += v;
  std::string s = head;
  for (size_t i = 0; i < c.size(); i++) {
    double pct = total ? static_cast<double>(c[i]) * 100.0 / static_cast<double>(total) : 0.0;
    s += StrFormat("%s%s=%3.1f%%", i ? ", " : "", labels[i], pct);
  }
  return s + "\n";
}

std::string TimeText(uint64_t unix_ms) {
  time_t t = static_cast<time_t>(unix_ms / 1000);
  char buf[64];
  struct tm tm;
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Y", &tm);
  return buf;
}

}  // namespace

std::string FormatJobHeader(const Job& j, int groupid) {
  return StrFormat("%s: (g=%d): rw=%s, bs=(R) %s, (W) %s, (T) %s, ioengine=%s, iodepth=%u\n",
                   j.name.c_str(), groupid, j.rw_text.c_str(), BsRangeText(j, kRead).c_str(),
                   BsRangeText(j, kWrite).c_str(), BsRangeText(j, kTrim).c_str(), kBenchEngine,
                   j.iodepth);
}

std::string BenchVersionString() { return std::string("arcstore-") + ARCSTORE_VERSION; }

std::string FormatRunHeader(const JobSet& set) {
  std::string out;
  int group = 0;
  uint64_t workers = 0;
  bool threads = false;
  for (size_t i = 0; i < set.jobs.size(); i++) {
    const Job& j = set.jobs[i];
    if (i > 0 && (j.stonewall || j.new_group)) group++;
    workers += j.numjobs;
    threads = threads || j.thread;
    out += FormatJobHeader(j, group);
    if (j.numjobs > 1) out += "...\n";
  }
  out += BenchVersionString() + "\n";
  // fio's words (workers here are always threads of this process).
  const char* noun = threads ? (workers == 1 ? "thread" : "threads") : (workers == 1 ? "process" : "processes");
  out += StrFormat("Starting %llu %s\n", static_cast<unsigned long long>(workers), noun);
  return out;
}

std::string FormatText(const RunResult& run) {
  std::string out;
  for (const JobResult& r : run.jobs) {
    const GroupResult* g = nullptr;
    for (const auto& gr : run.groups) {
      if (gr.groupid == r.groupid) g = &gr;
    }
    out += StrFormat("%s: (groupid=%d, jobs=%d): err=%2d: pid=%d: %s\n", r.name.c_str(), r.groupid,
                     r.jobs, r.error, static_cast<int>(getpid()), TimeText(r.end_unix_ms).c_str());
    if (r.job != nullptr && !r.job->description.empty()) {
      out += "  Description  : [" + r.job->description + "]\n";
    }
    for (int d = 0; d < kNumDirs; d++) {
      if (r.dirs[d].total_ios == 0) continue;
      ShowDir(&out, r, static_cast<Dir>(d), g ? g->agg_bw[d] : 0);
    }
    if (r.sync_ios > 0) {
      out += "  fsync/fdatasync/sync_file_range:\n";
      ShowLat(&out, "sync", r.sync_lat_ns);
    }
    ShowBands(&out, "nsec", r.lat_bands.ns, LatencyBands::Labels().data(), r.lat_bands.total);
    ShowBands(&out, "usec", r.lat_bands.us, LatencyBands::Labels().data(), r.lat_bands.total);
    ShowBands(&out, "msec", r.lat_bands.ms, LatencyBands::MsLabels().data(), r.lat_bands.total);
    out += StrFormat("  cpu          : usr=%3.2f%%, sys=%3.2f%%, ctx=%llu, majf=%llu, minf=%llu\n",
                     r.usr_cpu_pct, r.sys_cpu_pct, static_cast<unsigned long long>(r.ctx),
                     static_cast<unsigned long long>(r.majf), static_cast<unsigned long long>(r.minf));
    static const char* const kDepth[] = {"1", "2", "4", "8", "16", "32", ">=64"};
    static const char* const kBatch[] = {"0", "4", "8", "16", "32", "64", ">=64"};
    out += DepthLine("  IO depths    : ", r.depths.depth, kDepth);
    out += DepthLine("     submit    : ", r.depths.submit, kBatch);
    out += DepthLine("     complete  : ", r.depths.complete, kBatch);
    out += StrFormat("     issued rwts: total=%llu,%llu,%llu,0 short=0,0,0,0 dropped=0,0,0,0\n",
                     static_cast<unsigned long long>(r.dirs[kRead].total_ios),
                     static_cast<unsigned long long>(r.dirs[kWrite].total_ios),
                     static_cast<unsigned long long>(r.dirs[kTrim].total_ios));
    out += StrFormat("     latency   : target=0, window=0, percentile=100.00%%, depth=%u\n",
                     r.job != nullptr ? r.job->iodepth : 1);
    out += BuildView(r, r.region_bytes).ToText();
    if (r.machine_stalls) out += StallText(*r.machine_stalls, r.slow_ios);
    if (r.error != 0) out += "  error: " + r.error_text + "\n";
    out += "\n";
  }
  static const char* const kNames[] = {"   READ", "  WRITE", "   TRIM"};
  for (const GroupResult& g : run.groups) {
    out += StrFormat("Run status group %d (all jobs):\n", g.groupid);
    for (int d = 0; d < kNumDirs; d++) {
      if (g.max_run_ms[d] == 0) continue;
      out += StrFormat("%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%llu-%llumsec\n", kNames[d],
                       Num2Str(g.agg_bw[d], 4, true, N2SUnit::kBytesPerSec).c_str(),
                       Num2Str(g.agg_bw[d], 4, false, N2SUnit::kBytesPerSec).c_str(),
                       Num2Str(g.min_bw[d], 4, true, N2SUnit::kBytesPerSec).c_str(),
                       Num2Str(g.max_bw[d], 4, true, N2SUnit::kBytesPerSec).c_str(),
                       Num2Str(g.min_bw[d], 4, false, N2SUnit::kBytesPerSec).c_str(),
                       Num2Str(g.max_bw[d], 4, false, N2SUnit::kBytesPerSec).c_str(),
                       Num2Str(g.io_bytes[d], 4, true, N2SUnit::kBytes).c_str(),
                       Num2Str(g.io_bytes[d], 4, false, N2SUnit::kBytes).c_str(),
                       static_cast<unsigned long long>(g.min_run_ms[d]),
                       static_cast<unsigned long long>(g.max_run_ms[d]));
    }
    out += "\n";
  }
  return out;
}

}  // namespace arcstore::bench
