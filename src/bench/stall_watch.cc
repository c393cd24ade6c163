// See stall_watch.h for what a machine stall is and how it is seen.
#include "bench/stall_watch.h"

#include <algorithm>
#include <string>

#include "bench/fio_format.h"

namespace arcstore::bench {

Status StallOptions::Validate() const {
  if (period_ns < 1'000'000 || period_ns > 100'000'000) {
    return Status::InvalidArgument("StallOptions.period_ns " + std::to_string(period_ns) +
                                   ": must be 1 ms to 100 ms");
  }
  if (threshold_ns < 2 * period_ns) {
    return Status::InvalidArgument("StallOptions.threshold_ns " + std::to_string(threshold_ns) +
                                   ": must be at least two periods (" +
                                   std::to_string(2 * period_ns) + ")");
  }
  return Status::Ok();
}

void StallRecorder::Wake(uint64_t due_ns, uint64_t woke_ns) {
  const uint64_t late = woke_ns > due_ns ? woke_ns - due_ns : 0;
  if (late < options_.threshold_ns) return;
  stalls_.stalls++;
  stalls_.stall_ns += late;
  stalls_.worst_ns = std::max(stalls_.worst_ns, late);
  if (stalls_.events.size() < options_.max_events) {
    stalls_.events.push_back(StallEvent{due_ns > start_ns_ ? due_ns - start_ns_ : 0, late});
  }
}

MachineStalls StallRecorder::Result(uint64_t now_ns) const {
  MachineStalls out = stalls_;
  out.threshold_ns = options_.threshold_ns;
  out.start_ns = start_ns_;
  out.watched_ns = now_ns > start_ns_ ? now_ns - start_ns_ : 0;
  return out;
}

uint64_t IosDuringStalls(const MachineStalls& s, std::span<const SlowIo> ios) {
  // Both lists are in time order (events as seen, I/Os by start within a
  // job, clones appended): a binary search per I/O keeps it exact for any
  // order.
  uint64_t n = 0;
  for (const SlowIo& io : ios) {
    const uint64_t begin = io.start_ns, end = io.start_ns + io.lat_ns;
    auto first_ending_after = std::lower_bound(
        s.events.begin(), s.events.end(), begin, [&s](const StallEvent& e, uint64_t t) {
          return s.start_ns + e.at_ns + e.duration_ns <= t;
        });
    if (first_ending_after != s.events.end() && s.start_ns + first_ending_after->at_ns < end) n++;
  }
  return n;
}

std::string StallText(const MachineStalls& s, std::span<const SlowIo> slow_ios) {
  auto ms = [](uint64_t ns) { return StrFormat("%.1f ms", static_cast<double>(ns) / 1e6); };
  std::string line = "  machine      : ";
  const std::string over = StrFormat(" in %.1f s", static_cast<double>(s.watched_ns) / 1e9);
  if (s.stalls == 0) {
    line += "no stall of " + ms(s.threshold_ns) + " or more" + over;
  } else {
    line += StrFormat("%llu stalls of ", static_cast<unsigned long long>(s.stalls)) +
            ms(s.threshold_ns) + " or more" + over + " (" + ms(s.stall_ns) + " in all, worst " +
            ms(s.worst_ns) + "): no CPU ran the process (the host's CPU limit, or steal)";
  }
  if (!slow_ios.empty()) {
    line += StrFormat("; I/Os of %s or more: %zu, %llu of them during a stall",
                      ms(kSlowIoNs).c_str(), slow_ios.size(),
                      static_cast<unsigned long long>(IosDuringStalls(s, slow_ios)));
  }
  return line + "\n";
}

void WatchStalls(const StallOptions& options, Clock* clock, const std::atomic<bool>* done,
                 MachineStalls* out) {
  StallRecorder recorder(options, clock->NowNs());
  while (!done->load(std::memory_order_acquire)) {
    const uint64_t due = clock->NowNs() + options.period_ns;
    clock->SleepUntilNs(due);
    recorder.Wake(due, clock->NowNs());
  }
  *out = recorder.Result(clock->NowNs());
}

}  // namespace arcstore::bench
