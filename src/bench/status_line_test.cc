// fio's status line from worker progress.
#include <gtest/gtest.h>

#include "bench/status_line.h"

namespace arcstore::bench {
namespace {

TEST(StatusLine, LooksLikeFios) {
  StatusLineState state;
  WorkerProgressView w;
  w.letter = 'w';
  w.running = true;
  w.planned_ns = 20'000'000'000ull;
  std::string first = state.Update({w}, 0);
  EXPECT_EQ(first, "Jobs: 1 (f=1): [w(1)][0.0%][eta 00m:20s]");
  w.bytes[kWrite] = 650ull << 20;
  w.ios[kWrite] = 166'400;
  std::string line = state.Update({w}, 7'000'000'000ull);
  // 650 MiB and 166.4k I/Os over 7 s.
  EXPECT_EQ(line, "Jobs: 1 (f=1): [w(1)][35.0%][w=92.9MiB/s][w=23.8k IOPS][eta 00m:13s]");
}

TEST(StatusLine, RunLengthLettersAndFinishedJobs) {
  StatusLineState state;
  WorkerProgressView a, b, c;
  a.letter = b.letter = 'R';
  a.running = b.running = true;
  a.planned_bytes = b.planned_bytes = 100;
  a.bytes[kRead] = 50;
  b.bytes[kRead] = 25;
  c.letter = '_';
  c.finished = true;
  std::string line = state.Update({a, b, c}, 1'000'000'000ull);
  EXPECT_EQ(line.substr(0, 32), "Jobs: 2 (f=2): [R(2)_(1)][25.0%]");
  EXPECT_EQ(FormatEta(3725), "1h:02m:05s");
}

}  // namespace
}  // namespace arcstore::bench
