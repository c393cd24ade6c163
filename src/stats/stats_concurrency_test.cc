// Concurrent updates of sharded counters and histograms while snapshots are
// taken: run under the tsan preset to prove the primitives race-free.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "base/random.h"
#include "stats/registry.h"

namespace arcstore::stats {
namespace {

TEST(StatsConcurrencyTest, CountersAndHistogramsLoseNothing) {
  Registry r;
  Counter* c = r.AddCounter("t", "ops", Unit::kOps, "");
  Histogram* h = r.AddHistogram("t", "lat", Unit::kNanoseconds, "");
  const int threads = 4;
  const uint64_t per_thread = ScaledIterations(200000);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    uint64_t last = 0;
    while (!done.load()) {
      uint64_t now = static_cast<uint64_t>(r.TakeSnapshot().Get("t", "ops"));
      EXPECT_GE(now, last);  // monotonic even while racing
      last = now;
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; t++) {
    writers.emplace_back([&, t] {
      for (uint64_t i = 0; i < per_thread; i++) {
        c->Add();
        h->Record(static_cast<uint64_t>(t) * 1000 + (i & 1023));
      }
    });
  }
  for (auto& w : writers) w.join();
  done = true;
  reader.join();
  EXPECT_EQ(c->Value(), threads * per_thread);
  HistogramData d = h->Read();
  EXPECT_EQ(d.count, threads * per_thread);
  uint64_t bucket_total = 0;
  for (uint64_t b : d.buckets) bucket_total += b;
  EXPECT_EQ(bucket_total, d.count);
  EXPECT_EQ(d.max, 3000u + 1023u);
}

TEST(StatsConcurrencyTest, DeclaringWhileSnapshotting) {
  Registry r;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) (void)r.TakeSnapshot();
  });
  for (int i = 0; i < 200; i++) {
    r.AddCounter("m" + std::to_string(i % 10), "c" + std::to_string(i), Unit::kOps, "")->Add(1);
  }
  done = true;
  reader.join();
  EXPECT_EQ(r.List().size(), 200u);
}

}  // namespace
}  // namespace arcstore::stats
