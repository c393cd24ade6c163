// ManualClock: a Clock that moves only when told to.
//
// Two modes:
//  - auto-advance (default off): SleepUntilNs() moves the clock to the
//    deadline itself, so a single-threaded test of a throttle sees exactly the
//    delays the code asked for, with no real waiting;
//  - blocking: SleepUntilNs() blocks until another thread calls Advance()
//    past the deadline, for multi-threaded tests that step time explicitly.
//
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <cstdint>

#include "base/clock.h"
#include "base/thread_annotations.h"

namespace arcstore::testing {

class ManualClock final : public Clock {
 public:
  explicit ManualClock(uint64_t start_ns = 1'000'000'000, bool auto_advance = false)
      : now_ns_(start_ns), auto_advance_(auto_advance) {}

  uint64_t NowNs() override {
    MutexLock l(&mu_);
    return now_ns_;
  }

  void SleepUntilNs(uint64_t deadline_ns) override {
    MutexLock l(&mu_);
    sleeps_++;
    if (auto_advance_) {
      if (deadline_ns > now_ns_) now_ns_ = deadline_ns;
      cv_.SignalAll();
      return;
    }
    while (now_ns_ < deadline_ns) cv_.Wait(&mu_);
  }

  void AdvanceNs(uint64_t delta_ns) {
    MutexLock l(&mu_);
    now_ns_ += delta_ns;
    cv_.SignalAll();
  }

  void SetNs(uint64_t now_ns) {
    MutexLock l(&mu_);
    if (now_ns > now_ns_) now_ns_ = now_ns;
    cv_.SignalAll();
  }

  // How many times SleepUntilNs was called.
  uint64_t sleeps() {
    MutexLock l(&mu_);
    return sleeps_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  uint64_t now_ns_ ARC_GUARDED_BY(mu_);
  uint64_t sleeps_ ARC_GUARDED_BY(mu_) = 0;
  const bool auto_advance_;
};

}  // namespace arcstore::testing
