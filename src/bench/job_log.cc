#include "bench/job_log.h"

#include <algorithm>

namespace arcstore::bench {

const char* LogKindName(LogKind kind) {
  switch (kind) {
    case LogKind::kBw:
      return "bw";
    case LogKind::kIops:
      return "iops";
    case LogKind::kLat:
      return "lat";
    case LogKind::kClat:
      return "clat";
    case LogKind::kSlat:
      return "slat";
  }
  return "?";
}

Status JobLogOptions::Validate() const {
  if (avg_ms > static_cast<uint64_t>(kMaxLogAvgMs)) {
    return Status::InvalidArgument("JobLogOptions.avg_ms: above one hour");
  }
  if (max_entries == 0 || max_entries > (uint64_t{1} << 28)) {
    return Status::InvalidArgument("JobLogOptions.max_entries: must be 1..2^28");
  }
  return Status::Ok();
}

JobLog::JobLog(const JobLogOptions& options, uint64_t start_ns) : o_(options), start_ns_(start_ns) {
  // Windowed logs are small: room for a minute of windows up front, so the
  // I/O path rarely allocates.
  if (o_.avg_ms != 0) {
    const size_t windows = std::min<uint64_t>(60'000 / o_.avg_ms + 1, 4096);
    for (int k = 0; k < kNumLogKinds; k++) {
      if (o_.kinds[k]) logs_[k].reserve(std::min<uint64_t>(windows * kNumDirs, o_.max_entries));
    }
  }
}

void JobLog::Add(LogKind kind, const LogEntry& e) {
  const size_t k = Index(kind);
  if (!o_.kinds[k]) return;
  if (logs_[k].size() >= o_.max_entries) {
    dropped_[k]++;
    return;
  }
  logs_[k].push_back(e);
}

void JobLog::AddLat(LatWindow* w, uint64_t ns) {
  w->sum += ns;
  w->count++;
  w->max = std::max(w->max, ns);
}

// Writes the open window's entries at `time_ms` and empties it. Bandwidth
// and IOPS only for a complete window (`with_rates`).
void JobLog::CloseWindow(uint64_t time_ms, bool with_rates) {
  const uint64_t w_ms = o_.avg_ms;
  for (int d = 0; d < kNumDirs; d++) {
    LogEntry e;
    e.time_ms = time_ms;
    e.dir = static_cast<uint8_t>(d);
    if (with_rates && o_.active_dirs[d]) {
      e.value = bytes_[d] * 1000 / (w_ms * 1024);
      Add(LogKind::kBw, e);
      e.value = ios_[d] * 1000 / w_ms;
      Add(LogKind::kIops, e);
    }
    const LogKind lat_kinds[3] = {LogKind::kLat, LogKind::kClat, LogKind::kSlat};
    for (int i = 0; i < 3; i++) {
      LatWindow& w = lat_[i][d];
      if (w.count == 0) continue;
      e.value = o_.max_value ? w.max : w.sum / w.count;
      Add(lat_kinds[i], e);
      w = LatWindow{};
    }
    bytes_[d] = 0;
    ios_[d] = 0;
  }
}

void JobLog::OnIo(uint64_t done_ns, Dir dir, uint64_t bytes, uint64_t offset, uint64_t lat_ns,
                  uint64_t clat_ns, std::optional<uint64_t> slat_ns) {
  const uint64_t since_ns = done_ns > start_ns_ ? done_ns - start_ns_ : 0;
  if (o_.avg_ms == 0) {
    LogEntry e;
    e.time_ms = since_ns / 1'000'000;
    e.dir = static_cast<uint8_t>(dir);
    e.block_bytes = static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX));
    e.offset_bytes = offset;
    e.value = lat_ns;
    Add(LogKind::kLat, e);
    e.value = clat_ns;
    Add(LogKind::kClat, e);
    if (slat_ns) {
      e.value = *slat_ns;
      Add(LogKind::kSlat, e);
    }
    e.value = bytes * 1'000'000 / std::max<uint64_t>(clat_ns, 1);
    Add(LogKind::kBw, e);
    e.value = 1;
    Add(LogKind::kIops, e);
    return;
  }
  // Windows that ended before this completion close first (empty ones as
  // zero rates): an I/O completed out of order late counts in the open one.
  const uint64_t window = since_ns / (o_.avg_ms * 1'000'000);
  while (window_ < window) {
    window_++;
    CloseWindow(window_ * o_.avg_ms, true);
  }
  bytes_[dir] += bytes;
  ios_[dir]++;
  AddLat(&lat_[0][dir], lat_ns);
  AddLat(&lat_[1][dir], clat_ns);
  if (slat_ns) AddLat(&lat_[2][dir], *slat_ns);
}

void JobLog::Finish(uint64_t end_ns) {
  end_ns_ = std::max(end_ns, start_ns_);
  if (o_.avg_ms == 0) return;
  const uint64_t since_ns = end_ns_ - start_ns_;
  const uint64_t complete = since_ns / (o_.avg_ms * 1'000'000);
  while (window_ < complete) {
    window_++;
    CloseWindow(window_ * o_.avg_ms, true);
  }
  CloseWindow(since_ns / 1'000'000, false);
}

}  // namespace arcstore::bench
