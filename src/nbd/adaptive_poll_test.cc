#include "nbd/adaptive_poll.h"

#include <gtest/gtest.h>

#include "testing/manual_clock.h"

namespace arcstore::nbd {
namespace {

constexpr uint64_t kMaxNs = 64'000;  // the window's floor is 8 us
constexpr uint64_t kStepNs = 1'000;  // each non-waiting read "takes" 1 us

// One connection's waits on a manual clock: the next request arrives
// `gap_ns` after the wait starts. A non-waiting read moves the clock by
// kStepNs and finds the request once it has arrived; the waiting read moves
// the clock to the arrival.
class AdaptivePollTest : public ::testing::Test {
 protected:
  AdaptivePollTest() : budget_(1) {
    counters_.caught = registry_.AddCounter("t", "caught", stats::Unit::kOps, "");
    counters_.slept = registry_.AddCounter("t", "slept", stats::Unit::kOps, "");
    counters_.no_budget = registry_.AddCounter("t", "no_budget", stats::Unit::kOps, "");
    counters_.poll_ns = registry_.AddCounter("t", "poll_ns", stats::Unit::kNanoseconds, "");
    counters_.rests = registry_.AddCounter("t", "rests", stats::Unit::kOps, "");
    poll_ = std::make_unique<AdaptivePoll>(kMaxNs, &budget_, &clock_, counters_);
  }

  // Returns whether polling caught the request.
  bool WaitFor(uint64_t gap_ns) {
    const uint64_t arrival_ns = clock_.NowNs() + gap_ns;
    const uint64_t caught_before = counters_.caught->Value();
    tries_ = 0;
    Result<size_t> r = poll_->Await(
        [&]() -> Result<size_t> {
          tries_++;
          if (clock_.NowNs() >= arrival_ns) return size_t{28};
          clock_.AdvanceNs(kStepNs);
          return Status::Busy("nothing yet");
        },
        [&]() -> Result<size_t> {
          if (clock_.NowNs() < arrival_ns) clock_.AdvanceNs(arrival_ns - clock_.NowNs());
          return size_t{28};
        });
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(*r, 28u);
    return counters_.caught->Value() > caught_before;
  }

  // Waits with gaps alternating between short (they grow the window) and
  // longer than the window (polled in vain) until a rest begins, for at
  // most ten epochs; returns whether one did.
  bool WaitUntilRest() {
    for (uint32_t n = 0; n < 10 * AdaptivePoll::kEpochWaits; n++) {
      WaitFor(n % 2 == 0 ? 20'000 : 200'000);
      if (poll_->rest_waits() > 0) return true;
    }
    return false;
  }

  stats::Registry registry_;
  testing::ManualClock clock_;
  PollBudget budget_;
  PollCounters counters_;
  std::unique_ptr<AdaptivePoll> poll_;
  int tries_ = 0;
};

// A request that arrives inside the window is caught by polling, which
// costs the time it waited, and the window stays.
TEST_F(AdaptivePollTest, ARequestInsideTheWindowIsCaughtAndTheWindowStays) {
  EXPECT_EQ(poll_->window_ns(), kMaxNs);
  EXPECT_TRUE(WaitFor(10'000));
  EXPECT_EQ(tries_, 11);  // 10 misses, 1 us apart, then the request
  EXPECT_EQ(counters_.poll_ns->Value(), 10'000u);
  EXPECT_EQ(counters_.slept->Value(), 0u);
  EXPECT_EQ(poll_->window_ns(), kMaxNs);
}

// An idle client (long gaps) halves the window per wait and then stops
// polling altogether: the CPU spent polling is bounded. A client that then
// turns around quickly grows it back until polling catches its requests.
TEST_F(AdaptivePollTest, AnIdleClientStopsThePollingAndABusyOneRestartsIt) {
  const std::vector<uint64_t> shrinking = {32'000, 16'000, 8'000, 0};
  for (uint64_t want : shrinking) {
    EXPECT_FALSE(WaitFor(10'000'000));
    EXPECT_EQ(poll_->window_ns(), want);
  }
  const uint64_t polled_ns = counters_.poll_ns->Value();
  EXPECT_EQ(polled_ns, kMaxNs + 32'000 + 16'000 + 8'000);
  EXPECT_FALSE(WaitFor(10'000'000));
  EXPECT_EQ(tries_, 0) << "a window of 0 does not poll";
  EXPECT_EQ(poll_->window_ns(), 0u);
  EXPECT_EQ(counters_.poll_ns->Value(), polled_ns);

  // Requests 20 us apart: slept, but a longer window would have caught
  // them: 8, 16, then 32 us, which catches them.
  for (uint64_t want : {8'000u, 16'000u, 32'000u}) {
    EXPECT_FALSE(WaitFor(20'000));
    EXPECT_EQ(poll_->window_ns(), want);
  }
  EXPECT_TRUE(WaitFor(20'000));
  EXPECT_EQ(poll_->window_ns(), 32'000u);
  EXPECT_EQ(counters_.caught->Value(), 1u);
  EXPECT_EQ(counters_.slept->Value(), 8u);
}

// A client whose gaps alternate between short and longer than the window
// keeps the window open while polling catches nothing: after an epoch the
// connection rests, sleeping at once for an epoch's waits, then polls
// again; a second epoch that does not pay rests twice as long.
TEST_F(AdaptivePollTest, PollingThatDoesNotPayRestsAndRestsLongerEachTime) {
  ASSERT_TRUE(WaitUntilRest());
  EXPECT_EQ(counters_.rests->Value(), 1u);
  EXPECT_EQ(poll_->rest_waits(), AdaptivePoll::kEpochWaits);
  EXPECT_LT(counters_.caught->Value(), AdaptivePoll::kEpochWaits / 4);

  // The rest: every wait sleeps at once, even one the window would catch.
  const uint64_t polled_ns = counters_.poll_ns->Value();
  for (uint32_t n = 0; n < AdaptivePoll::kEpochWaits; n++) {
    EXPECT_FALSE(WaitFor(n % 2 == 0 ? 20'000 : 200'000));
    EXPECT_EQ(tries_, 0) << n;
  }
  EXPECT_EQ(counters_.poll_ns->Value(), polled_ns);
  EXPECT_EQ(poll_->rest_waits(), 0u);

  // Polling again, still not paying: a rest of two epochs.
  ASSERT_TRUE(WaitUntilRest());
  EXPECT_GT(counters_.poll_ns->Value(), polled_ns) << "it polled between the rests";
  EXPECT_EQ(counters_.rests->Value(), 2u);
  EXPECT_EQ(poll_->rest_waits(), 2u * AdaptivePoll::kEpochWaits);
}

// A client that comes back within the window is caught every time and
// never rests; an epoch that pays ends the doubling of the rests.
TEST_F(AdaptivePollTest, PollingThatPaysNeverRestsAndResetsTheRests) {
  for (uint32_t n = 0; n < 10 * AdaptivePoll::kEpochWaits; n++) {
    ASSERT_TRUE(WaitFor(10'000)) << n;
  }
  EXPECT_EQ(counters_.rests->Value(), 0u);
  EXPECT_EQ(poll_->rest_waits(), 0u);

  // Two epochs that do not pay, each rest slept through: rests of one
  // epoch, then of two.
  for (uint64_t want : {1u, 2u}) {
    ASSERT_TRUE(WaitUntilRest());
    EXPECT_EQ(poll_->rest_waits(), want * AdaptivePoll::kEpochWaits);
    for (uint64_t n = poll_->rest_waits(); n > 0; n--) WaitFor(200'000);
  }
  EXPECT_EQ(counters_.rests->Value(), 2u);

  // Paying epochs (the window may first have to grow back): the next rest
  // is one epoch again.
  for (uint32_t n = 0; n < 3 * AdaptivePoll::kEpochWaits; n++) WaitFor(10'000);
  EXPECT_EQ(counters_.rests->Value(), 2u);
  ASSERT_TRUE(WaitUntilRest());
  EXPECT_EQ(counters_.rests->Value(), 3u);
  EXPECT_EQ(poll_->rest_waits(), AdaptivePoll::kEpochWaits);
}

// With the budget spent by another connection, a wait sleeps at once and
// says so; once the budget is back it polls again.
TEST_F(AdaptivePollTest, AWaitWithNoBudgetSleepsAtOnce) {
  ASSERT_TRUE(budget_.TryAcquire());
  EXPECT_FALSE(budget_.TryAcquire()) << "a budget of 1";
  EXPECT_FALSE(WaitFor(10'000));
  EXPECT_EQ(tries_, 0);
  EXPECT_EQ(counters_.no_budget->Value(), 1u);
  EXPECT_EQ(counters_.poll_ns->Value(), 0u);
  budget_.Release();
  EXPECT_TRUE(WaitFor(10'000));
  EXPECT_TRUE(budget_.TryAcquire()) << "polling gave its slot back";
  budget_.Release();
}

// A failed read (not "nothing yet") ends the wait with that failure.
TEST_F(AdaptivePollTest, AFailedReadEndsTheWait) {
  bool waited = false;
  Result<size_t> r = poll_->Await([]() -> Result<size_t> { return Status::IOError("reset"); },
                                  [&]() -> Result<size_t> {
                                    waited = true;
                                    return size_t{0};
                                  });
  EXPECT_EQ(r.status().code(), StatusCode::kIOError);
  EXPECT_FALSE(waited);
  EXPECT_TRUE(budget_.TryAcquire());
}

// The default budget leaves one CPU unpolled, and is at least one.
TEST(PollBudgetTest, DefaultsToOneFewerThanTheCpusAndAtLeastOne) {
  PollBudget b(0);
  EXPECT_GE(b.max_pollers(), 1u);
  EXPECT_LT(b.max_pollers(), std::max(2u, std::thread::hardware_concurrency()));
  for (uint32_t i = 0; i < b.max_pollers(); i++) EXPECT_TRUE(b.TryAcquire()) << i;
  EXPECT_FALSE(b.TryAcquire());
  b.Release();
  EXPECT_TRUE(b.TryAcquire());
  EXPECT_EQ(PollBudget(3).max_pollers(), 3u);
}

}  // namespace
}  // namespace arcstore::nbd
