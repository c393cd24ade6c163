// RequestPolicy's rules one by one: which requests run inline and when the
// held replies must go.
#include "nbd/request_policy.h"

#include <gtest/gtest.h>

#include <memory>

#include "nbd/protocol.h"

namespace arcstore::nbd {
namespace {

constexpr uint64_t k4K = 4096;
constexpr uint64_t k1M = 1 << 20;

TEST(RequestPolicy, ShortDataCommandsAreTheFourDataKindsUpTo64KiB) {
  for (uint16_t c : {kCmdRead, kCmdWrite, kCmdTrim, kCmdWriteZeroes}) {
    EXPECT_TRUE(RequestPolicy::ShortDataCommand(c, 64 * 1024)) << c;
    EXPECT_FALSE(RequestPolicy::ShortDataCommand(c, 64 * 1024 + 1)) << c;
  }
  for (uint16_t c : {kCmdFlush, kCmdCache, kCmdBlockStatus, kCmdDisc}) {
    EXPECT_FALSE(RequestPolicy::ShortDataCommand(c, k4K)) << c;
  }
}

TEST(RequestPolicy, AloneMeansIdleWithNothingBufferedPastThePayload) {
  RequestPolicy p({});
  const bool nofua = false, nosync = false;
  EXPECT_TRUE(p.RunsAlone(kCmdRead, k4K, nofua, /*idle=*/true, /*buffered=*/0, nosync));
  EXPECT_FALSE(p.RunsAlone(kCmdRead, k4K, nofua, /*idle=*/false, 0, nosync));
  EXPECT_FALSE(p.RunsAlone(kCmdRead, k4K, nofua, true, 1, nosync))
      << "a request is buffered behind the read";
  // A WRITE's own payload may be buffered; one byte more may not.
  EXPECT_TRUE(p.RunsAlone(kCmdWrite, k4K, nofua, true, k4K, nosync));
  EXPECT_FALSE(p.RunsAlone(kCmdWrite, k4K, nofua, true, k4K + 1, nosync));
  // FLUSH runs alone; long requests and the other commands do not.
  EXPECT_TRUE(p.RunsAlone(kCmdFlush, 0, nofua, true, 0, nosync));
  EXPECT_FALSE(p.RunsAlone(kCmdRead, k1M, nofua, true, 0, nosync));
  EXPECT_FALSE(p.RunsAlone(kCmdCache, k4K, nofua, true, 0, nosync));
  EXPECT_FALSE(p.RunsAlone(kCmdBlockStatus, k4K, nofua, true, 0, nosync));

  RequestPolicy::Options off;
  off.inline_idle_requests = false;
  RequestPolicy q(off);
  EXPECT_FALSE(q.RunsAlone(kCmdRead, k4K, nofua, true, 0, nosync));
}

TEST(RequestPolicy, ACommitThatWouldSyncATxgDoesNotRunAlone) {
  RequestPolicy p({});
  // A FLUSH and the data commands with FUA commit the log; a READ does not.
  EXPECT_TRUE(RequestPolicy::Commits(kCmdFlush, false));
  for (uint16_t c : {kCmdWrite, kCmdTrim, kCmdWriteZeroes}) {
    EXPECT_TRUE(RequestPolicy::Commits(c, /*fua=*/true)) << c;
    EXPECT_FALSE(RequestPolicy::Commits(c, /*fua=*/false)) << c;
  }
  EXPECT_FALSE(RequestPolicy::Commits(kCmdRead, true));

  // Idle and nothing buffered, but the commit would wait for a txg sync:
  // submitted, so the reader keeps taking the client's other requests.
  EXPECT_FALSE(p.RunsAlone(kCmdFlush, 0, false, true, 0, /*commit_would_sync=*/true));
  EXPECT_FALSE(p.RunsAlone(kCmdWrite, k4K, /*fua=*/true, true, k4K, true));
  EXPECT_TRUE(p.RunsAlone(kCmdWrite, k4K, /*fua=*/true, true, k4K, false));
  // A request that commits nothing runs alone whatever the log's state.
  EXPECT_TRUE(p.RunsAlone(kCmdWrite, k4K, /*fua=*/false, true, k4K, true));
  EXPECT_TRUE(p.RunsAlone(kCmdRead, k4K, /*fua=*/true, true, 0, true));
}

TEST(RequestPolicy, HintedForShortDataAndReadsAndWritesUpTo1MiBWithoutFua) {
  RequestPolicy p({});
  EXPECT_TRUE(p.MayRunHinted(kCmdRead, k4K, /*fua=*/false));
  EXPECT_TRUE(p.MayRunHinted(kCmdWrite, k4K, false));
  EXPECT_FALSE(p.MayRunHinted(kCmdWrite, k4K, /*fua=*/true));
  EXPECT_FALSE(p.MayRunHinted(kCmdFlush, 0, false));
  // A READ served from memory is a copy and a send on either thread, and a
  // WRITE's payload is received on the connection's thread either way: up
  // to 1 MiB they run inline; longer ones, and long zeroing, never do.
  EXPECT_TRUE(p.MayRunHinted(kCmdRead, k1M, false));
  EXPECT_FALSE(p.MayRunHinted(kCmdRead, k1M + 1, false));
  EXPECT_TRUE(p.MayRunHinted(kCmdWrite, 128 * 1024, false));
  EXPECT_TRUE(p.MayRunHinted(kCmdWrite, k1M, false));
  EXPECT_FALSE(p.MayRunHinted(kCmdWrite, k1M, /*fua=*/true));
  EXPECT_FALSE(p.MayRunHinted(kCmdWrite, k1M + 1, false));
  EXPECT_FALSE(p.MayRunHinted(kCmdWriteZeroes, 128 * 1024, false));
  EXPECT_FALSE(p.MayRunHinted(kCmdTrim, k1M, false));

  RequestPolicy::Options off;
  off.inline_requests_that_do_not_wait = false;
  RequestPolicy q(off);
  EXPECT_FALSE(q.MayRunHinted(kCmdRead, k4K, false));
}

TEST(RequestPolicy, HeldRepliesGoEverySixteenInlineRequests) {
  RequestPolicy p({});
  for (int round = 0; round < 3; round++) {
    for (uint32_t i = 1; i < RequestPolicy::kMaxInlineBurst; i++) {
      EXPECT_FALSE(p.Dispatched(/*run_inline=*/true, k4K)) << "round " << round << " #" << i;
      EXPECT_FALSE(p.Dispatched(/*run_inline=*/false, k4K)) << "submitted ones do not count";
    }
    EXPECT_TRUE(p.Dispatched(true, k4K)) << "round " << round;
    p.RepliesSent();
  }
  // Replies sent for another reason restart the count.
  for (uint32_t i = 1; i < RequestPolicy::kMaxInlineBurst; i++) p.Dispatched(true, k4K);
  p.RepliesSent();
  EXPECT_FALSE(p.Dispatched(true, k4K));
}

// A client sending long requests waits for their replies to send more: the
// reply of a long inline request goes at once, a submitted one's on the
// engine thread as always.
TEST(RequestPolicy, ALongInlineRequestsReplyGoesAtOnce) {
  RequestPolicy p({});
  EXPECT_TRUE(p.Dispatched(/*run_inline=*/true, k1M));
  p.RepliesSent();
  EXPECT_TRUE(p.Dispatched(true, RequestPolicy::kInlineMaxBytes + 1));
  p.RepliesSent();
  EXPECT_FALSE(p.Dispatched(true, RequestPolicy::kInlineMaxBytes)) << "a short one waits";
  EXPECT_FALSE(p.Dispatched(/*run_inline=*/false, k1M));
}

}  // namespace
}  // namespace arcstore::nbd
