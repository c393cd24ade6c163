// MachineStallMonitor: the machine's stalls (base/stall_watch.h) as a
// running server's stats, module "machine":
//
//   stalls          counter  wake-ups late by threshold_ns (10 ms) or more:
//                            times no CPU ran the process that long
//   stall_ns        counter  their lateness, summed
//   watched_ns      counter  time watched (stall_ns / watched_ns is the
//                            share of time the process was stopped)
//   worst_stall_ns  gauge    the longest since the monitor started
//
// so that `arcstore stat`, the metrics and `doctor` can tell a tail latency
// of tens of milliseconds that the host caused (a VM stopped at its CPU
// quota, steal) from one the engine caused:
//
//   watch thread:  sleep(period) --wakes--> late = woke - due
//                    watched_ns += woke - previous wake
//                    late >= threshold --> stalls++, stall_ns += late,
//                                          worst_stall_ns = max
//
// Limits: period and threshold as StallOptions::Validate allows; no
// events are kept (a server runs for months). Cost: one wake-up a period
// (500 a second at 2 ms).
//
// Thread-safety: Start and the destructor from one thread; the stats are
// the registry's (read from any thread). The destructor stops the watch
// (within a period) and removes the module.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "base/clock.h"
#include "base/result.h"
#include "base/stall_watch.h"
#include "stats/registry.h"

namespace arcstore::stats {

class MachineStallMonitor {
 public:
  // `clock` and `registry` must outlive the monitor; the registry must not
  // hold a module "machine" already.
  static Result<std::unique_ptr<MachineStallMonitor>> Start(const StallOptions& options,
                                                            Clock* clock, Registry* registry);
  ~MachineStallMonitor();
  MachineStallMonitor(const MachineStallMonitor&) = delete;
  MachineStallMonitor& operator=(const MachineStallMonitor&) = delete;

  static constexpr const char* kModule = "machine";

 private:
  MachineStallMonitor(const StallOptions& options, Clock* clock, Registry* registry);
  void Run();

  const StallOptions options_;
  Clock* const clock_;
  Registry* const registry_;
  Counter* const stalls_;
  Counter* const stall_ns_;
  Counter* const watched_ns_;
  Gauge* const worst_ns_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace arcstore::stats
