// See stall_watch.h for what a machine stall is and how it is seen.
#include "base/stall_watch.h"

#include <algorithm>
#include <string>

namespace arcstore {

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

uint64_t StallRecorder::Wake(uint64_t due_ns, uint64_t woke_ns) {
  const uint64_t late = woke_ns > due_ns ? woke_ns - due_ns : 0;
  if (late < options_.threshold_ns) return 0;
  stalls_.stalls++;
  stalls_.stall_ns += late;
  stalls_.worst_ns = std::max(stalls_.worst_ns, late);
  if (stalls_.events.size() < options_.max_events) {
    stalls_.events.push_back(StallEvent{due_ns > start_ns_ ? due_ns - start_ns_ : 0, late});
  }
  return late;
}

MachineStalls StallRecorder::Result(uint64_t now_ns) const {
  MachineStalls out = stalls_;
  out.threshold_ns = options_.threshold_ns;
  out.start_ns = start_ns_;
  out.watched_ns = now_ns > start_ns_ ? now_ns - start_ns_ : 0;
  return out;
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

}  // namespace arcstore
