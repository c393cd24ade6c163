// Machine stalls: only wake-ups late by the threshold count; the watch
// loop notices a clock that jumps while it sleeps; the report line says
// what was seen.
#include "bench/stall_watch.h"

#include <gtest/gtest.h>

#include <thread>

#include "testing/manual_clock.h"

namespace arcstore::bench {
namespace {

constexpr uint64_t kMs = 1'000'000;

TEST(StallRecorderTest, CountsOnlyWakeUpsLateByTheThreshold) {
  StallOptions o;
  o.max_events = 2;
  StallRecorder r(o, 100 * kMs);
  r.Wake(102 * kMs, 102 * kMs + 50'000);  // 50 us late: the scheduler
  r.Wake(104 * kMs, 113 * kMs);            // 9 ms: under the threshold
  r.Wake(106 * kMs, 131 * kMs);            // 25 ms
  r.Wake(133 * kMs, 143 * kMs);            // 10 ms: counted
  r.Wake(145 * kMs, 157 * kMs);            // 12 ms: counted, not kept
  const MachineStalls s = r.Result(200 * kMs);
  EXPECT_EQ(s.stalls, 3u);
  EXPECT_EQ(s.stall_ns, 47 * kMs);
  EXPECT_EQ(s.worst_ns, 25 * kMs);
  EXPECT_EQ(s.watched_ns, 100 * kMs);
  EXPECT_EQ(s.threshold_ns, o.threshold_ns);
  ASSERT_EQ(s.events.size(), 2u) << "max_events";
  EXPECT_EQ(s.events[0].at_ns, 6 * kMs);
  EXPECT_EQ(s.events[0].duration_ns, 25 * kMs);
  EXPECT_EQ(s.events[1].at_ns, 33 * kMs);
}

TEST(StallRecorderTest, OptionsAreBounded) {
  EXPECT_TRUE(StallOptions{}.Validate().ok());
  StallOptions fast;
  fast.period_ns = kMs / 2;
  EXPECT_NE(fast.Validate().ToString().find("period_ns"), std::string::npos);
  StallOptions close;
  close.threshold_ns = 3 * kMs;  // under two periods of 2 ms
  EXPECT_NE(close.Validate().ToString().find("threshold_ns"), std::string::npos);
}

// The watch sleeps on its clock; a jump of the clock while it sleeps (the
// machine stopped) is one stall of the jump's length, less nothing else.
TEST(StallWatchTest, AClockThatJumpsWhileTheWatchSleepsIsAStall) {
  testing::ManualClock clock(1000 * kMs);
  std::atomic<bool> done{false};
  MachineStalls out;
  std::thread watch([&] { WatchStalls(StallOptions{}, &clock, &done, &out); });
  while (clock.sleeps() < 1) std::this_thread::yield();
  clock.AdvanceNs(2 * kMs);  // on time
  while (clock.sleeps() < 2) std::this_thread::yield();
  clock.AdvanceNs(32 * kMs);  // due after 2 ms, woke after 32: 30 ms late
  while (clock.sleeps() < 3) std::this_thread::yield();
  done = true;
  clock.AdvanceNs(2 * kMs);
  watch.join();
  EXPECT_EQ(out.stalls, 1u);
  EXPECT_EQ(out.worst_ns, 30 * kMs);
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].at_ns, 4 * kMs);
  EXPECT_EQ(out.watched_ns, 36 * kMs);
}

TEST(StallWatchTest, TheReportLineSaysWhatWasSeen) {
  MachineStalls none;
  none.threshold_ns = 10 * kMs;
  none.watched_ns = 20'000 * kMs;
  EXPECT_EQ(StallText(none, {}), "  machine      : no stall of 10.0 ms or more in 20.0 s\n");
  MachineStalls some = none;
  some.stalls = 3;
  some.stall_ns = 47 * kMs;
  some.worst_ns = 25 * kMs;
  some.start_ns = 1000 * kMs;
  some.events = {{100 * kMs, 25 * kMs}, {300 * kMs, 12 * kMs}};
  const std::vector<SlowIo> slow = {{1090 * kMs, 12 * kMs}, {1200 * kMs, 11 * kMs}};
  const std::string text = StallText(some, slow);
  EXPECT_NE(text.find("3 stalls of 10.0 ms or more in 20.0 s (47.0 ms in all, worst 25.0 ms)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("no CPU ran the process"), std::string::npos);
  EXPECT_NE(text.find("I/Os of 10.0 ms or more: 2, 1 of them during a stall"), std::string::npos)
      << text;
}

// A slow I/O is held against the stalls by time: it counts when it
// overlaps one, by any amount, and not when it only touches one's edge.
TEST(StallWatchTest, SlowIosAreMatchedToTheStallsTheyOverlap) {
  MachineStalls s;
  s.start_ns = 5000 * kMs;
  s.events = {{10 * kMs, 20 * kMs}, {100 * kMs, 15 * kMs}, {400 * kMs, 30 * kMs}};
  auto io = [](uint64_t start_ms, uint64_t lat_ms) { return SlowIo{start_ms * kMs, lat_ms * kMs}; };
  EXPECT_EQ(IosDuringStalls(s, std::vector<SlowIo>{io(5000, 10)}), 0u) << "ends as the first begins";
  EXPECT_EQ(IosDuringStalls(s, std::vector<SlowIo>{io(5000, 11)}), 1u);
  EXPECT_EQ(IosDuringStalls(s, std::vector<SlowIo>{io(5029, 12)}), 1u) << "starts inside";
  EXPECT_EQ(IosDuringStalls(s, std::vector<SlowIo>{io(5030, 60)}), 0u) << "between two";
  EXPECT_EQ(IosDuringStalls(s, std::vector<SlowIo>{io(5090, 400)}), 1u) << "spans two: once";
  EXPECT_EQ(IosDuringStalls(s, std::vector<SlowIo>{io(5440, 10), io(5405, 10), io(5200, 10)}), 1u);
  EXPECT_EQ(IosDuringStalls(MachineStalls{}, std::vector<SlowIo>{io(5000, 50)}), 0u);
}

}  // namespace
}  // namespace arcstore::bench
