#include "bench/results.h"

#include <algorithm>
#include <map>

namespace arcstore::bench {

void DirStats::Merge(const DirStats& o) {
  io_bytes += o.io_bytes;
  total_ios += o.total_ios;
  slat_ns.Merge(o.slat_ns);
  clat_ns.Merge(o.clat_ns);
  lat_ns.Merge(o.lat_ns);
  clat_hist.Merge(o.clat_hist);
  bw_kib_samples.Merge(o.bw_kib_samples);
  iops_samples.Merge(o.iops_samples);
  runtime_ms = std::max(runtime_ms, o.runtime_ms);
}

void DepthStats::Merge(const DepthStats& o) {
  for (size_t i = 0; i < depth.size(); i++) {
    depth[i] += o.depth[i];
    submit[i] += o.submit[i];
    complete[i] += o.complete[i];
  }
}

void JobResult::Merge(const JobResult& o) {
  for (int d = 0; d < kNumDirs; d++) dirs[d].Merge(o.dirs[d]);
  lat_bands.Merge(o.lat_bands);
  depths.Merge(o.depths);
  sync_ios += o.sync_ios;
  sync_lat_ns.Merge(o.sync_lat_ns);
  job_runtime_ms = std::max(job_runtime_ms, o.job_runtime_ms);
  start_unix_ms = std::min(start_unix_ms, o.start_unix_ms);
  end_unix_ms = std::max(end_unix_ms, o.end_unix_ms);
  usr_cpu_pct += o.usr_cpu_pct;
  sys_cpu_pct += o.sys_cpu_pct;
  ctx += o.ctx;
  majf += o.majf;
  minf += o.minf;
  verify_errors += o.verify_errors;
  verified_blocks += o.verified_blocks;
  for (const SlowIo& s : o.slow_ios) {
    if (slow_ios.size() < kMaxSlowIos) slow_ios.push_back(s);
  }
  if (first_verify_error.empty()) first_verify_error = o.first_verify_error;
  if (error == 0 && o.error != 0) {
    error = o.error;
    error_text = o.error_text;
  }
  jobs += o.jobs;
  bool new_volume = false;
  for (const auto& v : o.volume_names) {
    if (std::find(volume_names.begin(), volume_names.end(), v) == volume_names.end()) {
      volume_names.push_back(v);
      new_volume = true;
    }
  }
  region_bytes = new_volume ? region_bytes + o.region_bytes : std::max(region_bytes, o.region_bytes);
}

uint64_t BwBytesPerSec(const DirStats& d) {
  if (d.runtime_ms == 0) return 0;
  return d.io_bytes * 1000 / d.runtime_ms;
}

double Iops(const DirStats& d) {
  if (d.runtime_ms == 0) return 0;
  return static_cast<double>(d.total_ios) * 1000.0 / static_cast<double>(d.runtime_ms);
}

std::vector<GroupResult> ComputeGroups(const std::vector<JobResult>& jobs) {
  std::map<int, GroupResult> groups;
  for (const JobResult& j : jobs) {
    GroupResult& g = groups[j.groupid];
    g.groupid = j.groupid;
    for (int d = 0; d < kNumDirs; d++) {
      const DirStats& s = j.dirs[d];
      if (s.runtime_ms == 0 && s.total_ios == 0) continue;
      uint64_t bw = BwBytesPerSec(s);
      bool first = g.max_run_ms[d] == 0 && g.io_bytes[d] == 0 && g.max_bw[d] == 0;
      g.min_bw[d] = first ? bw : std::min(g.min_bw[d], bw);
      g.max_bw[d] = std::max(g.max_bw[d], bw);
      g.min_run_ms[d] = first ? s.runtime_ms : std::min(g.min_run_ms[d], s.runtime_ms);
      g.max_run_ms[d] = std::max(g.max_run_ms[d], s.runtime_ms);
      g.io_bytes[d] += s.io_bytes;
    }
  }
  std::vector<GroupResult> out;
  for (auto& [id, g] : groups) {
    for (int d = 0; d < kNumDirs; d++) {
      g.agg_bw[d] = g.max_run_ms[d] ? g.io_bytes[d] * 1000 / g.max_run_ms[d] : 0;
    }
    out.push_back(g);
  }
  return out;
}

}  // namespace arcstore::bench
