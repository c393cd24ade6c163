// Clock: the engine's only source of time, injected so that control loops
// (ARC growth holdoff, txg timeouts, the write throttle) can be tested
// deterministically with testing/manual_clock.h.
//
// Times are monotonic nanoseconds since an arbitrary origin.
// Thread-safety: implementations must be safe to call from any thread.
#pragma once

#include <cstdint>

#include "base/units.h"

namespace arcstore {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual uint64_t NowNs() = 0;
  // Blocks the calling thread until NowNs() >= deadline_ns.
  virtual void SleepUntilNs(uint64_t deadline_ns) = 0;
  void SleepForNs(uint64_t duration_ns) { SleepUntilNs(NowNs() + duration_ns); }
};

// The real monotonic clock (CLOCK_MONOTONIC). Stateless.
class SystemClock final : public Clock {
 public:
  uint64_t NowNs() override;
  void SleepUntilNs(uint64_t deadline_ns) override;
};

// A process-lifetime SystemClock for callers that are not given one. It has
// no state, so sharing it is not a mutable global.
Clock* DefaultClock();

}  // namespace arcstore
