// FakeMemoryMonitor: a MemoryMonitor whose readings the test sets.
//
//   FakeMemoryMonitor mon(8 * kGiB);            // limit 8 GiB, all available
//   mon.SetPressure(true, "psi some avg10 40%"); // the next Read() says so
//   mon.SetPressure(true, "available low", -1, /*shortage=*/true);
//   mon.SetAvailable(100 * kMiB);
//   mon.FailNextReads(1, "cgroup gone");         // Read() returns an error
//
// Every Read() returns the current reading (or the queued failure) and is
// counted. Thread-safety: all methods may be called from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "arc/monitor/memory_monitor.h"
#include "base/thread_annotations.h"

namespace arcstore::testing {

class FakeMemoryMonitor final : public MemoryMonitor {
 public:
  explicit FakeMemoryMonitor(uint64_t limit_bytes, std::string source = "fake limit") {
    reading_.limit_bytes = limit_bytes;
    reading_.available_bytes = limit_bytes;
    reading_.limit_source = std::move(source);
  }

  Result<MemoryReading> Read() override {
    MutexLock l(&mu_);
    reads_++;
    if (failures_ > 0) {
      failures_--;
      return Status::IOError("fake memory monitor: " + failure_);
    }
    return reading_;
  }

  void SetLimit(uint64_t limit_bytes, std::string source = "fake limit") {
    MutexLock l(&mu_);
    reading_.limit_bytes = limit_bytes;
    reading_.limit_source = std::move(source);
  }
  void SetAvailable(uint64_t available_bytes) {
    MutexLock l(&mu_);
    reading_.available_bytes = available_bytes;
  }
  // Pressure on (with its reason) or off. Pressure is stalls only (PSI with
  // memory available) unless `shortage` says memory itself is short.
  void SetPressure(bool on, std::string reason = "fake pressure", double psi_some_avg10 = -1,
                   bool shortage = false) {
    MutexLock l(&mu_);
    reading_.under_pressure = on;
    reading_.short_of_memory = on && shortage;
    reading_.pressure_reason = on ? std::move(reason) : std::string();
    reading_.psi_some_avg10 = psi_some_avg10;
  }
  void FailNextReads(int count, std::string why) {
    MutexLock l(&mu_);
    failures_ = count;
    failure_ = std::move(why);
  }
  void Set(const MemoryReading& reading) {
    MutexLock l(&mu_);
    reading_ = reading;
  }
  uint64_t reads() {
    MutexLock l(&mu_);
    return reads_;
  }

 private:
  Mutex mu_;
  MemoryReading reading_ ARC_GUARDED_BY(mu_);
  int failures_ ARC_GUARDED_BY(mu_) = 0;
  std::string failure_ ARC_GUARDED_BY(mu_);
  uint64_t reads_ ARC_GUARDED_BY(mu_) = 0;
};

}  // namespace arcstore::testing
