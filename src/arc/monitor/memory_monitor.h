// MemoryMonitor: what the ARC knows about the memory around it.
//
// The ARC sizes its target c from the memory limit (c_max = 50% of it by
// default) and shrinks c under pressure. A monitor reports the limit the
// process lives under (a cgroup v1/v2 limit, MemTotal, or a configured cap)
// and how much of it is available, with the source of each number, so that
// every change of c can name its cause.
//
// Implementations (system_memory_monitor.h): readers of cgroup v1, v2 and hybrid layouts,
// /proc/meminfo and /proc/pressure/memory (tested on fixture files), a
// configured cap, and testing/fake_memory_monitor.h for tests.
//
// Thread-safety: Read() may be called from any thread.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/result.h"

namespace arcstore {

// A limit_bytes of kNoMemoryLimit means "this source sets no limit" (a
// cgroup's "max"); a combined reading always has a finite limit.
inline constexpr uint64_t kNoMemoryLimit = std::numeric_limits<uint64_t>::max();

struct MemoryReading {
  uint64_t limit_bytes = 0;      // what the process may use in all
  uint64_t available_bytes = 0;  // what it could still take without pressure
  // Why the limit is what it is: "cgroup v2 memory.max", "MemTotal", "cap".
  std::string limit_source;
  // True when the kernel (PSI) or the cgroup reports reclaim pressure now,
  // or available memory is below the low threshold.
  bool under_pressure = false;
  // True when the pressure is a shortage: available memory below the low
  // threshold. Pressure without it is stalls only (PSI: tasks waited on
  // reclaim while memory was still available, as when the page cache
  // churns), which the ARC answers with a smaller step (arc.cc, TARGET c).
  bool short_of_memory = false;
  // PSI "some avg10" for memory, percent; negative when unknown.
  double psi_some_avg10 = -1;
  // Why pressure is reported ("psi some avg10 32.1% > 10%", "available
  // 120 MiB < 5% of limit"); empty when there is none.
  std::string pressure_reason;
  // What the reading could not use and why ("no /proc/pressure/memory: PSI
  // unknown", "not in a memory cgroup"); informational, never an error.
  std::vector<std::string> notes;
};

class MemoryMonitor {
 public:
  virtual ~MemoryMonitor() = default;
  virtual Result<MemoryReading> Read() = 0;
};

}  // namespace arcstore
