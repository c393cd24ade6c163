#include "bench/view.h"

#include "base/units.h"
#include "bench/fio_format.h"

namespace arcstore::bench {
namespace {

std::optional<int64_t> Find(const stats::Snapshot& s, std::string_view module, std::string_view name) {
  const stats::StatValue* v = s.Find(module, name);
  if (v == nullptr) return std::nullopt;
  if (v->info.kind == stats::Kind::kCounter) return static_cast<int64_t>(v->counter);
  if (v->info.kind == stats::Kind::kGauge) return v->gauge;
  return std::nullopt;
}

std::string Bytes(uint64_t b) { return Num2Str(b, 4, true, N2SUnit::kBytes); }

std::string Ns(uint64_t ns) {
  if (ns >= 1'000'000'000) return StrFormat("%.2fs", static_cast<double>(ns) / 1e9);
  if (ns >= 1'000'000) return StrFormat("%.2fms", static_cast<double>(ns) / 1e6);
  return StrFormat("%lluus", static_cast<unsigned long long>(ns / 1000));
}

std::optional<uint64_t> FindU(const stats::Snapshot& s, const char* module, const char* name) {
  auto x = Find(s, module, name);
  if (!x) return std::nullopt;
  return static_cast<uint64_t>(*x);
}

// The ARC's hit ratio (demand data, else all), target and size.
void ReadArc(const stats::Snapshot& s, ArcstoreView* v) {
  auto hits = Find(s, "arcstats", "demand_data_hits");
  auto misses = Find(s, "arcstats", "demand_data_misses");
  if (!hits || !misses || *hits + *misses == 0) {
    hits = Find(s, "arcstats", "hits");
    misses = Find(s, "arcstats", "misses");
  }
  if (hits && misses && *hits + *misses > 0) {
    v->arc_hit_ratio = static_cast<double>(*hits) / static_cast<double>(*hits + *misses);
    v->empty = false;
  }
  if (auto c = Find(s, "arcstats", "c")) {
    v->arc_c_bytes = static_cast<uint64_t>(*c);
    v->region_fits_in_c = v->region_bytes <= *v->arc_c_bytes;
    v->empty = false;
  }
  if (auto size = Find(s, "arcstats", "size")) v->arc_size_bytes = static_cast<uint64_t>(*size);
}

// Txg syncs by reason, the throttle's delays, read-modify-write reads and
// the device's writes.
void ReadPipeline(const stats::Snapshot& s, ArcstoreView* v) {
  for (const stats::StatValue& sv : s.values) {
    if (sv.info.module != "txg" || sv.info.name.rfind("syncs_", 0) != 0) continue;
    v->empty = false;
    if (sv.counter == 0) continue;
    v->syncs_by_reason[sv.info.name.substr(6)] = sv.counter;
    v->txgs += sv.counter;
  }
  v->delay_ns = FindU(s, "txg", "delay_ns");
  v->blocked_ns = FindU(s, "txg", "blocked_ns");
  v->memory_throttle_count = FindU(s, "txg", "memory_throttle_count");
  auto rmw = FindU(s, "volumes", "rmw_reads");
  auto rmw_dirty = FindU(s, "volumes", "rmw_dirty");
  if (rmw || rmw_dirty) v->rmw_reads = rmw.value_or(0) + rmw_dirty.value_or(0);
  v->disk_writes = FindU(s, "io", "writes");
  v->disk_write_bytes = FindU(s, "io", "write_bytes");
  if (const stats::StatValue* h = s.Find("io", "write_size_bytes");
      h != nullptr && h->info.kind == stats::Kind::kHistogram && h->histogram.sum > 0) {
    // By bytes, a lower bound: the share of bytes written in I/Os of
    // 512 KiB or more.
    v->disk_writes_512k_share = h->histogram.SumShareAtLeast(512 * kKiB);
  }
}

// The intent log's commits, device flushes and batch sizes, if it ran.
void ReadIntentLog(const stats::Snapshot& s, ArcstoreView* v) {
  auto requests = FindU(s, "zil", "commit_requests");
  if (!requests || *requests == 0) return;
  ArcstoreView::IntentLog log;
  log.commit_requests = *requests;
  log.commits = FindU(s, "zil", "commits").value_or(0);
  log.device_flushes = FindU(s, "zil", "flushes").value_or(0) + FindU(s, "zil", "fua_writes").value_or(0);
  log.fallback_syncs = FindU(s, "zil", "fallback_syncs").value_or(0);
  if (const stats::StatValue* h = s.Find("zil", "batch_records");
      h != nullptr && h->info.kind == stats::Kind::kHistogram) {
    for (int b = 0; b < stats::HistogramData::kBuckets; b++) {
      const uint64_t low = stats::HistogramData::BucketLow(b);
      const size_t slot = low < 2 ? 0 : low < 4 ? 1 : low < 8 ? 2 : low < 16 ? 3 : 4;
      log.batches[slot] += h->histogram.buckets[b];
    }
  }
  v->intent_log = log;
  v->empty = false;
}

// Peaks and ranges over the job's sampled series: dirty share, ARC size
// and target.
void ReadSeries(const StatsSeries& ser, ArcstoreView* v) {
  auto range = [](std::optional<int64_t>* lo, std::optional<int64_t>* hi, int64_t x) {
    if (x < 0) return;
    *lo = std::min(lo->value_or(x), x);
    *hi = std::max(hi->value_or(x), x);
  };
  for (size_t i = 0; i < ser.t_ms.size(); i++) {
    if (ser.dirty_bytes[i] >= 0 && ser.dirty_max_bytes[i] > 0) {
      double pct = 100.0 * static_cast<double>(ser.dirty_bytes[i]) / static_cast<double>(ser.dirty_max_bytes[i]);
      v->peak_dirty_pct = std::max(v->peak_dirty_pct.value_or(0.0), pct);
    }
    range(&v->arc_size_min, &v->arc_size_max, ser.arc_size[i]);
    range(&v->arc_c_min, &v->arc_c_max, ser.arc_c[i]);
  }
}

// What the figures of `job` measured, when it was not the device.
void AddWarnings(const JobResult& job, ArcstoreView* v) {
  const bool reads = job.dirs[kRead].total_ios > 0;
  const bool writes = job.dirs[kWrite].total_ios > 0;
  if (reads && v->arc_hit_ratio && *v->arc_hit_ratio > 0.5) {
    v->warnings.push_back(StrFormat(
        "%.1f%% of reads were served by the ARC: the read figures are cache figures, not device figures",
        *v->arc_hit_ratio * 100.0));
  }
  if (reads && v->region_fits_in_c && *v->region_fits_in_c) {
    v->warnings.push_back("the job's region (" + Bytes(v->region_bytes) + ") fits in the ARC target c (" +
                          Bytes(*v->arc_c_bytes) + "): use a larger size or --arc-max to measure the device");
  }
  if (writes && v->txgs == 0 && job.sync_ios == 0 && !(job.job && job.job->sync)) {
    v->warnings.push_back(
        "no txg was synced during the job: the write figures measured memory, not the device");
  }
}

}  // namespace

ArcstoreView BuildView(const JobResult& job, uint64_t region_bytes) {
  ArcstoreView v;
  v.region_bytes = region_bytes;
  if (!job.arcstore_delta) return v;
  const stats::Snapshot& s = *job.arcstore_delta;
  ReadArc(s, &v);
  ReadPipeline(s, &v);
  ReadIntentLog(s, &v);
  v.outlasted_txg_timeout = job.job_runtime_ms > 5000;
  if (const StatsSeries* ser = job.arcstore_series.get()) ReadSeries(*ser, &v);
  if (v.rmw_reads || v.disk_writes) v.empty = false;
  if (!v.empty) AddWarnings(job, &v);
  return v;
}

nlohmann::ordered_json ArcstoreView::ToJson() const {
  nlohmann::ordered_json j;
  if (arc_hit_ratio) j["arc_hit_ratio"] = *arc_hit_ratio;
  if (arc_c_bytes) j["arc_c_bytes"] = *arc_c_bytes;
  if (arc_size_bytes) j["arc_size_bytes"] = *arc_size_bytes;
  if (region_fits_in_c) j["region_fits_in_c"] = *region_fits_in_c;
  j["region_bytes"] = region_bytes;
  j["txgs"] = txgs;
  j["syncs_by_reason"] = syncs_by_reason;
  if (delay_ns) j["throttle_delay_ns"] = *delay_ns;
  if (blocked_ns) j["throttle_blocked_ns"] = *blocked_ns;
  if (memory_throttle_count) j["memory_throttle_count"] = *memory_throttle_count;
  if (rmw_reads) j["rmw_reads"] = *rmw_reads;
  if (disk_writes) j["disk_writes"] = *disk_writes;
  if (disk_write_bytes) j["disk_write_bytes"] = *disk_write_bytes;
  if (disk_writes_512k_share) j["disk_writes_512k_or_more_share"] = *disk_writes_512k_share;
  j["outlasted_txg_timeout"] = outlasted_txg_timeout;
  if (peak_dirty_pct) j["peak_dirty_pct"] = *peak_dirty_pct;
  if (arc_size_min) j["arc_size_range_bytes"] = {*arc_size_min, *arc_size_max};
  if (arc_c_min) j["arc_c_range_bytes"] = {*arc_c_min, *arc_c_max};
  if (intent_log) {
    j["intent_log"] = {{"commit_requests", intent_log->commit_requests},
                       {"commits", intent_log->commits},
                       {"device_flushes", intent_log->device_flushes},
                       {"fallback_syncs", intent_log->fallback_syncs},
                       {"batches_1_2_4_8_16", intent_log->batches}};
  }
  j["warnings"] = warnings;
  return j;
}

std::string ArcstoreView::ToText() const {
  if (empty) return "";
  std::string line = "  arcstore     : ";
  std::vector<std::string> parts;
  if (arc_hit_ratio) parts.push_back(StrFormat("ARC hit ratio=%.1f%%", *arc_hit_ratio * 100.0));
  if (arc_c_bytes) {
    parts.push_back("c=" + Bytes(*arc_c_bytes) + (arc_size_bytes ? ", size=" + Bytes(*arc_size_bytes) : "") +
                    ", region=" + Bytes(region_bytes));
  }
  std::string txg = StrFormat("txgs=%llu", static_cast<unsigned long long>(txgs));
  if (!syncs_by_reason.empty()) {
    txg += " (";
    bool first = true;
    for (const auto& [reason, n] : syncs_by_reason) {
      txg += StrFormat("%s%s=%llu", first ? "" : ", ", reason.c_str(), static_cast<unsigned long long>(n));
      first = false;
    }
    txg += ")";
  }
  parts.push_back(txg);
  if (arc_size_min && arc_c_min) {
    parts.push_back("over the run: size " + Bytes(static_cast<uint64_t>(*arc_size_min)) + ".." +
                    Bytes(static_cast<uint64_t>(*arc_size_max)) + ", c " +
                    Bytes(static_cast<uint64_t>(*arc_c_min)) + ".." + Bytes(static_cast<uint64_t>(*arc_c_max)));
  }
  if (peak_dirty_pct) parts.push_back(StrFormat("peak dirty=%.1f%%", *peak_dirty_pct));
  if (delay_ns) parts.push_back("delayed=" + Ns(*delay_ns));
  if (blocked_ns) parts.push_back("blocked=" + Ns(*blocked_ns));
  if (rmw_reads) parts.push_back(StrFormat("rmw=%llu", static_cast<unsigned long long>(*rmw_reads)));
  if (disk_writes) {
    std::string d = StrFormat("disk writes=%llu", static_cast<unsigned long long>(*disk_writes));
    if (disk_write_bytes) d += " (" + Bytes(*disk_write_bytes) + ")";
    if (disk_writes_512k_share) d += StrFormat(", >=512KiB=%.1f%%", *disk_writes_512k_share * 100.0);
    parts.push_back(d);
  }
  for (size_t i = 0; i < parts.size(); i++) line += (i ? ", " : "") + parts[i];
  line += "\n";
  if (intent_log) {
    const IntentLog& l = *intent_log;
    line += StrFormat("  arcstore     : intent log: %llu commit requests, %llu commits, %llu device flushes",
                      static_cast<unsigned long long>(l.commit_requests),
                      static_cast<unsigned long long>(l.commits),
                      static_cast<unsigned long long>(l.device_flushes));
    if (l.device_flushes > 0) {
      line += StrFormat(" (%.2f requests per flush)",
                        static_cast<double>(l.commit_requests) / static_cast<double>(l.device_flushes));
    }
    if (l.commits > 0) {
      static constexpr const char* kNames[] = {"1", "2-3", "4-7", "8-15", "16+"};
      line += "; records per commit:";
      for (size_t i = 0; i < l.batches.size(); i++) {
        line += StrFormat(" %s=%.0f%%", kNames[i],
                          100.0 * static_cast<double>(l.batches[i]) / static_cast<double>(l.commits));
      }
    }
    line += StrFormat("; txg fallbacks=%llu\n", static_cast<unsigned long long>(l.fallback_syncs));
  }
  for (const std::string& w : warnings) line += "  arcstore     : WARNING: " + w + "\n";
  return line;
}

}  // namespace arcstore::bench
