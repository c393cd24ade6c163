// The server's stall monitor: a clock that jumps while the watch sleeps is
// a stall in the "machine" stats, on-time wake-ups only add watched time,
// and stopping the monitor removes its module.
#include "stats/machine_stalls.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "testing/manual_clock.h"

namespace arcstore::stats {
namespace {

constexpr uint64_t kMs = 1'000'000;

int64_t Stat(Registry& r, const char* name) {
  return r.TakeSnapshot().Get(MachineStallMonitor::kModule, name);
}

bool HasModule(Registry& r) {
  for (const StatInfo& s : r.List()) {
    if (s.module == MachineStallMonitor::kModule) return true;
  }
  return false;
}

TEST(MachineStallMonitorTest, StallsAreCountedWhileTheServerRuns) {
  testing::ManualClock clock(1000 * kMs);
  Registry registry;
  auto started = MachineStallMonitor::Start(StallOptions{}, &clock, &registry);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::unique_ptr<MachineStallMonitor> monitor = std::move(*started);
  while (clock.sleeps() < 1) std::this_thread::yield();
  clock.AdvanceNs(2 * kMs);  // on time
  while (clock.sleeps() < 2) std::this_thread::yield();
  EXPECT_EQ(Stat(registry, "stalls"), 0);
  EXPECT_EQ(Stat(registry, "watched_ns"), int64_t{2 * kMs});
  clock.AdvanceNs(32 * kMs);  // due after 2 ms, woke after 32: 30 ms late
  while (clock.sleeps() < 3) std::this_thread::yield();
  clock.AdvanceNs(14 * kMs);  // 12 ms late: a second, shorter stall
  while (clock.sleeps() < 4) std::this_thread::yield();
  EXPECT_EQ(Stat(registry, "stalls"), 2);
  EXPECT_EQ(Stat(registry, "stall_ns"), int64_t{42 * kMs});
  EXPECT_EQ(Stat(registry, "worst_stall_ns"), int64_t{30 * kMs});
  EXPECT_EQ(Stat(registry, "watched_ns"), int64_t{48 * kMs});
  // The watch is asleep on the manual clock: move it along until the
  // monitor has stopped.
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    monitor.reset();
    stopped = true;
  });
  while (!stopped) {
    clock.AdvanceNs(1 * kMs);
    std::this_thread::yield();
  }
  stopper.join();
  EXPECT_FALSE(HasModule(registry)) << "the module goes with the monitor";
}

TEST(MachineStallMonitorTest, BadOptionsAreRefused) {
  Registry registry;
  StallOptions close;
  close.threshold_ns = 3 * kMs;  // under two periods of 2 ms
  auto m = MachineStallMonitor::Start(close, DefaultClock(), &registry);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().ToString().find("threshold_ns"), std::string::npos);
  EXPECT_FALSE(HasModule(registry)) << "nothing registered for a refused monitor";
}

}  // namespace
}  // namespace arcstore::stats
