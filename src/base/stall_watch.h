// Machine stalls: time the whole machine did not run the process, as an
// idle thread sees it.
//
// A watch thread sleeps period_ns at a time and measures how late each
// wake-up is. An idle thread is woken within tens of microseconds, and
// the kernel's scheduler lets a thread that has slept cut in front of busy
// ones within a few milliseconds; a wake-up late by threshold_ns (10 ms)
// or more means no CPU ran this process for that long. On a virtual
// machine that is the host: a VM whose CPUs and I/O together pass its CPU
// quota is stopped for the rest of each 100 ms period, or its CPUs are
// given to other guests (steal). Such a stall stops every thread at once,
// the job's writers too, so it bounds the job's worst latencies from below
// whatever the engine does. The bench reports it beside a job's latencies
// (bench/stall_watch.h) and `arcstore serve` counts it in its stats
// (stats/machine_stalls.h), so that a reader can tell the machine's stalls
// from the engine's:
//
//   watch:  sleep(period) --wakes--> late = woke - due
//             late >= threshold --> a stall: {due, late} counted and kept
//                                   (the first max_events of them)
//
// Limits: period 1..100 ms, threshold at least 2 periods, at most
// max_events events kept (the counts go on past it). Cost: one wake-up a
// period (500 a second at 2 ms).
//
// Thread-safety: StallRecorder is a value for one thread; WatchStalls runs
// on the thread that calls it until `done` and then fills `out`.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "base/clock.h"
#include "arcstore/status.h"

namespace arcstore {

struct StallOptions {
  uint64_t period_ns = 2'000'000;
  uint64_t threshold_ns = 10'000'000;
  uint32_t max_events = 10000;

  Status Validate() const;
};

struct StallEvent {
  uint64_t at_ns = 0;        // when the wake-up was due, since the watch began
  uint64_t duration_ns = 0;  // how late it came
};

struct MachineStalls {
  uint64_t threshold_ns = 0;  // the least lateness counted
  uint64_t start_ns = 0;      // the clock when the watch began
  uint64_t watched_ns = 0;    // how long the watch ran
  uint64_t stalls = 0;
  uint64_t stall_ns = 0;      // the stalls' lateness, summed
  uint64_t worst_ns = 0;
  std::vector<StallEvent> events;  // the first max_events stalls, in order
};

class StallRecorder {
 public:
  StallRecorder(const StallOptions& options, uint64_t start_ns)
      : options_(options), start_ns_(start_ns) {}
  // A wake-up due at `due_ns` came at `woke_ns`. Returns the lateness
  // counted as a stall, or 0.
  uint64_t Wake(uint64_t due_ns, uint64_t woke_ns);
  // The stalls so far, watched up to `now_ns`.
  MachineStalls Result(uint64_t now_ns) const;
  // The longest stall so far (0: none).
  uint64_t worst_ns() const { return stalls_.worst_ns; }

 private:
  const StallOptions options_;
  const uint64_t start_ns_;
  MachineStalls stalls_;
};

// Sleeps and wakes on `clock` until `done`, then fills `out`.
void WatchStalls(const StallOptions& options, Clock* clock, const std::atomic<bool>* done,
                 MachineStalls* out);

}  // namespace arcstore
