#include "nbd/adaptive_poll.h"

#include <sched.h>

namespace arcstore::nbd {

namespace {

// The CPUs this process may run on (its affinity mask), at least 1.
uint32_t UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return static_cast<uint32_t>(std::max(1, CPU_COUNT(&set)));
}

}  // namespace

PollBudget::PollBudget(uint32_t max_pollers)
    : max_(max_pollers != 0 ? max_pollers : std::max<uint32_t>(1, UsableCpus() - 1)) {}

bool PollBudget::TryAcquire() {
  uint32_t n = active_.load(std::memory_order_relaxed);
  while (n < max_) {
    if (active_.compare_exchange_weak(n, n + 1, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

void PollBudget::Release() { active_.fetch_sub(1, std::memory_order_release); }

}  // namespace arcstore::nbd
