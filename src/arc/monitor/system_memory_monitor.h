// The real memory monitors: one per source of truth, and a combinator.
//
//   MeminfoMonitor   /proc/meminfo: limit MemTotal, available MemAvailable
//   CgroupMonitor    the process's memory cgroup, v1, v2 or hybrid layout,
//                    found from /proc/self/cgroup and /proc/self/mountinfo
//   PsiMonitor       /proc/pressure/memory: pressure only, no limit
//   CapMonitor       a configured cap (limit only)
//   CombinedMemoryMonitor  the smallest limit (naming its source), the
//                    smallest availability, pressure if any source or low
//                    availability says so, with every reason
//
// Every file is read under a root directory given at construction ("/" on a
// live system, a fixture tree in tests). A missing source is NotFound (the
// combinator notes it and goes on); a malformed file is Corruption naming
// the file and line, which the combinator returns as is.
//
// Thread-safety: Read() keeps no state between calls and may be called from
// any thread. Readings are values owned by the caller.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "arc/monitor/memory_monitor.h"
#include "base/result.h"

namespace arcstore {

struct PressureThresholds {
  double psi_some_avg10_pct = 10.0;  // "some" avg10 above this is pressure
  double psi_full_avg10_pct = 2.0;   // "full" avg10 above this is pressure
  double low_available_pct = 5.0;    // available below this % of the limit is pressure

  // Names the first bad field: percentages must lie in [0, 100].
  Status Validate() const;
};

class MeminfoMonitor final : public MemoryMonitor {
 public:
  explicit MeminfoMonitor(std::string root = "/") : root_(std::move(root)) {}
  Result<MemoryReading> Read() override;

 private:
  std::string root_;
};

class PsiMonitor final : public MemoryMonitor {
 public:
  explicit PsiMonitor(std::string root = "/", PressureThresholds t = {})
      : root_(std::move(root)), thresholds_(t) {}
  // limit_bytes and available_bytes are kNoMemoryLimit: PSI limits nothing.
  Result<MemoryReading> Read() override;

 private:
  std::string root_;
  PressureThresholds thresholds_;
};

// Which cgroup layout holds the memory controller, and where.
struct CgroupLocation {
  enum class Version { kV1, kV2 } version = Version::kV2;
  bool hybrid = false;       // v1 memory controller beside a v2 hierarchy
  std::string cgroup_path;   // as in /proc/self/cgroup ("/user.slice/x")
  std::string dir;           // the directory holding memory.* (no root prefix)
  std::string mount_point;   // where that hierarchy is mounted (no root prefix)
};
// Finds the memory cgroup from <root>/proc/self/cgroup and mountinfo.
// NotFound when the process is in no memory cgroup.
Result<CgroupLocation> LocateMemoryCgroup(const std::string& root);

class CgroupMonitor final : public MemoryMonitor {
 public:
  explicit CgroupMonitor(std::string root = "/", PressureThresholds t = {})
      : root_(std::move(root)), thresholds_(t) {}
  // v2: min over the cgroup and its ancestors of memory.max and memory.high;
  //     available = limit - memory.current + inactive_file (memory.stat);
  //     pressure from the cgroup's memory.pressure when present.
  // v1: min(memory.limit_in_bytes, hierarchical_memory_limit); values at or
  //     above 2^62 mean unlimited; available = limit - usage + inactive_file.
  Result<MemoryReading> Read() override;

 private:
  Result<MemoryReading> ReadV1(const CgroupLocation& loc);
  Result<MemoryReading> ReadV2(const CgroupLocation& loc);
  std::string root_;
  PressureThresholds thresholds_;
};

class CapMonitor final : public MemoryMonitor {
 public:
  explicit CapMonitor(uint64_t cap_bytes) : cap_bytes_(cap_bytes) {}
  Result<MemoryReading> Read() override;

 private:
  uint64_t cap_bytes_;
};

class CombinedMemoryMonitor final : public MemoryMonitor {
 public:
  CombinedMemoryMonitor(std::vector<std::unique_ptr<MemoryMonitor>> sources,
                        PressureThresholds t = {})
      : sources_(std::move(sources)), thresholds_(t) {}
  // NotFound when no source gives a finite limit.
  Result<MemoryReading> Read() override;

 private:
  std::vector<std::unique_ptr<MemoryMonitor>> sources_;
  PressureThresholds thresholds_;
};

struct SystemMemoryMonitorOptions {
  std::string root = "/";  // where /proc and /sys are found
  uint64_t cap_bytes = 0;  // 0: no configured cap
  PressureThresholds thresholds;

  Status Validate() const;
};

// meminfo + cgroup + PSI (+ cap), combined. The caller owns the monitor.
Result<std::unique_ptr<MemoryMonitor>> MakeSystemMemoryMonitor(
    const SystemMemoryMonitorOptions& options);

}  // namespace arcstore
