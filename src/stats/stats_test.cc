#include "stats/stats.h"

#include <gtest/gtest.h>

namespace arcstore::stats {
namespace {

TEST(HistogramTest, BucketsArePowersOfTwo) {
  EXPECT_EQ(HistogramData::BucketOf(0), 0);
  EXPECT_EQ(HistogramData::BucketOf(1), 1);
  EXPECT_EQ(HistogramData::BucketOf(2), 2);
  EXPECT_EQ(HistogramData::BucketOf(3), 2);
  EXPECT_EQ(HistogramData::BucketOf(4), 3);
  EXPECT_EQ(HistogramData::BucketOf(4095), 12);
  EXPECT_EQ(HistogramData::BucketOf(4096), 13);
  EXPECT_EQ(HistogramData::BucketOf(UINT64_MAX), 64);
  for (int i = 1; i < 64; i++) {
    EXPECT_EQ(HistogramData::BucketOf(HistogramData::BucketLow(i)), i);
    EXPECT_EQ(HistogramData::BucketOf(HistogramData::BucketHigh(i) - 1), i);
  }
}

TEST(HistogramTest, RecordsCountSumMax) {
  Histogram h;
  h.Record(0);
  h.Record(4096);
  h.Record(4096);
  h.Record(1 << 20);
  HistogramData d = h.Read();
  EXPECT_EQ(d.count, 4u);
  EXPECT_EQ(d.sum, 8192u + (1 << 20));
  EXPECT_EQ(d.max, 1u << 20);
  EXPECT_EQ(d.buckets[0], 1u);
  EXPECT_EQ(d.buckets[13], 2u);
  EXPECT_EQ(d.buckets[21], 1u);
}

TEST(HistogramTest, MergeAndMinusAreInverse) {
  Histogram a, b;
  for (uint64_t v = 1; v < 5000; v += 7) a.Record(v);
  for (uint64_t v = 100; v < 90000; v += 13) b.Record(v);
  HistogramData m = a.Read();
  m.Merge(b.Read());
  EXPECT_EQ(m.count, a.Read().count + b.Read().count);
  EXPECT_EQ(m.max, b.Read().max);
  HistogramData back = m.Minus(a.Read());
  EXPECT_EQ(back.buckets, b.Read().buckets);
  EXPECT_EQ(back.count, b.Read().count);
  EXPECT_EQ(back.sum, b.Read().sum);
}

TEST(HistogramTest, QuantilesAreBucketBoundsClampedToMax) {
  Histogram h;
  for (int i = 0; i < 99; i++) h.Record(100);  // bucket [64, 128)
  h.Record(5000);                               // bucket [4096, 8192)
  HistogramData d = h.Read();
  EXPECT_EQ(d.Quantile(0.5), 127u);
  EXPECT_EQ(d.Quantile(0.99), 127u);
  EXPECT_EQ(d.Quantile(0.999), 5000u);  // bucket top 8191 clamped to max
  EXPECT_EQ(d.Quantile(1.0), 5000u);
  EXPECT_EQ(HistogramData().Quantile(0.5), 0u);
}

TEST(HistogramTest, SumShareAtLeastCountsSmallValuesAtTheirBucketTop) {
  Histogram h;
  h.Record(4096);     // bucket [4096, 8192): counted as 8191
  h.Record(1 << 20);  // at the threshold: large
  h.Record(3 << 20);
  HistogramData d = h.Read();
  const double total = 4096.0 + (4 << 20);
  EXPECT_DOUBLE_EQ(d.SumShareAtLeast(1 << 20), 1.0 - 8191.0 / total);
  EXPECT_LT(d.SumShareAtLeast(1 << 20), (4 << 20) / total) << "a lower bound";
  EXPECT_DOUBLE_EQ(d.SumShareAtLeast(1), 1.0);
  EXPECT_DOUBLE_EQ(d.SumShareAtLeast(8 << 20), 0.0) << "clamped at 0";
  EXPECT_DOUBLE_EQ(HistogramData().SumShareAtLeast(1 << 20), 0.0);
}

TEST(CounterTest, SumsShards) {
  Counter c;
  c.Add();
  c.Add(41);
  EXPECT_EQ(c.Value(), 42u);
  Gauge g;
  g.Set(10);
  g.Add(-15);
  EXPECT_EQ(g.Value(), -5);
}

}  // namespace
}  // namespace arcstore::stats
