#include "volume/prefetcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace arcstore::volume {
namespace {

// A fake reader: records what the prefetcher asks to read ahead.
class PrefetcherTest : public ::testing::Test {
 protected:
  std::unique_ptr<Prefetcher> Make(uint64_t records, PrefetcherOptions o = {}) {
    return std::make_unique<Prefetcher>(records, o, [this](uint64_t r) { asked_.push_back(r); });
  }
  std::vector<uint64_t> Take() { return std::exchange(asked_, {}); }

  std::vector<uint64_t> asked_;
};

std::vector<uint64_t> Range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> v;
  for (uint64_t r = from; r < to; r++) v.push_back(r);
  return v;
}

TEST_F(PrefetcherTest, SequentialRunTriggersReadAheadOnce) {
  auto p = Make(1000);
  p->NoteDemandRead(10);
  p->NoteDemandRead(11);
  EXPECT_TRUE(Take().empty());  // a run of one record after the first
  p->NoteDemandRead(12);        // two in a row: read ahead 8
  EXPECT_EQ(Take(), Range(13, 21));
  p->NoteDemandRead(13);  // only what is not asked for yet
  EXPECT_EQ(Take(), Range(21, 22));
  p->NoteDemandRead(14);
  EXPECT_EQ(Take(), Range(22, 23));
}

TEST_F(PrefetcherTest, FirstRecordCountsAsAfterNothing) {
  auto p = Make(1000);
  p->NoteDemandRead(0);
  p->NoteDemandRead(1);
  EXPECT_EQ(Take(), Range(2, 10));
}

TEST_F(PrefetcherTest, RepeatedReadOfTheSameRecordKeepsTheRun) {
  auto p = Make(1000);
  p->NoteDemandRead(5);
  p->NoteDemandRead(6);
  p->NoteDemandRead(6);
  EXPECT_TRUE(Take().empty());
  p->NoteDemandRead(7);
  EXPECT_EQ(Take(), Range(8, 16));
  p->NoteDemandRead(7);  // the run holds; everything ahead is asked for
  EXPECT_TRUE(Take().empty());
}

TEST_F(PrefetcherTest, RandomReadsNeverTrigger) {
  auto p = Make(1000);
  for (uint64_t r : {500, 3, 77, 78, 12, 900, 901, 5}) p->NoteDemandRead(r);
  EXPECT_TRUE(Take().empty());
}

TEST_F(PrefetcherTest, JumpStartsANewStream) {
  auto p = Make(1000);
  for (uint64_t r = 10; r < 13; r++) p->NoteDemandRead(r);
  EXPECT_EQ(Take(), Range(13, 21));
  p->NoteDemandRead(100);
  p->NoteDemandRead(101);
  EXPECT_TRUE(Take().empty());
  p->NoteDemandRead(102);
  EXPECT_EQ(Take(), Range(103, 111));
}

TEST_F(PrefetcherTest, NewStreamBehindTheReadAheadAsksOnlyPastIt) {
  auto p = Make(1000);
  for (uint64_t r = 50; r < 53; r++) p->NoteDemandRead(r);
  EXPECT_EQ(Take(), Range(53, 61));
  for (uint64_t r = 40; r < 43; r++) p->NoteDemandRead(r);
  EXPECT_TRUE(Take().empty());  // 43..50 are ahead of this stream but behind 61
  for (uint64_t r = 43; r < 55; r++) p->NoteDemandRead(r);
  EXPECT_EQ(Take(), Range(61, 63));
}

TEST_F(PrefetcherTest, NeverPastTheLastRecord) {
  auto p = Make(20);
  for (uint64_t r = 14; r < 17; r++) p->NoteDemandRead(r);
  EXPECT_EQ(Take(), Range(17, 20));
  p->NoteDemandRead(17);
  p->NoteDemandRead(18);
  p->NoteDemandRead(19);
  EXPECT_TRUE(Take().empty());
}

TEST_F(PrefetcherTest, OptionsSetTriggerAndDistance) {
  auto p = Make(1000, PrefetcherOptions{.trigger_records = 1, .ahead_records = 3});
  p->NoteDemandRead(40);
  EXPECT_TRUE(Take().empty());
  p->NoteDemandRead(41);
  EXPECT_EQ(Take(), Range(42, 45));
}

// Concurrent readers of one stream never get a record read ahead twice.
TEST(PrefetcherConcurrencyTest, EachRecordAskedForAtMostOnce) {
  constexpr uint64_t kRecords = 4096;
  std::vector<std::atomic<int>> asked(kRecords);
  Prefetcher p(kRecords, PrefetcherOptions{}, [&](uint64_t r) { asked[r].fetch_add(1); });
  std::atomic<uint64_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&] {
      for (uint64_t r; (r = next.fetch_add(1)) < kRecords;) p.NoteDemandRead(r);
    });
  }
  for (auto& t : threads) t.join();
  for (uint64_t r = 0; r < kRecords; r++) EXPECT_LE(asked[r].load(), 1) << "record " << r;
}

}  // namespace
}  // namespace arcstore::volume
