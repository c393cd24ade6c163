#include "stats/stats.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <thread>

namespace arcstore::stats {

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kCounter: return "counter";
    case Kind::kGauge: return "gauge";
    case Kind::kHistogram: return "histogram";
  }
  return "?";
}

std::string_view UnitName(Unit unit) {
  switch (unit) {
    case Unit::kNone: return "";
    case Unit::kBytes: return "bytes";
    case Unit::kNanoseconds: return "ns";
    case Unit::kOps: return "ops";
    case Unit::kPercent: return "percent";
  }
  return "?";
}

namespace {

// Each thread picks a shard once, from its id, so that concurrent threads
// mostly land on different cache lines.
int ThreadShard() {
  thread_local const int shard = static_cast<int>(
      std::hash<std::thread::id>()(std::this_thread::get_id()) % Counter::kShards);
  return shard;
}

}  // namespace

void Counter::Add(uint64_t n) {
  shards_[ThreadShard()].v.fetch_add(n, std::memory_order_relaxed);
}

uint64_t Counter::Value() const {
  uint64_t total = 0;
  for (const auto& s : shards_) total += s.v.load(std::memory_order_relaxed);
  return total;
}

int HistogramData::BucketOf(uint64_t value) { return value == 0 ? 0 : 64 - std::countl_zero(value); }

uint64_t HistogramData::BucketLow(int i) { return i == 0 ? 0 : uint64_t{1} << (i - 1); }

uint64_t HistogramData::BucketHigh(int i) {
  if (i == 0) return 1;
  if (i >= 64) return UINT64_MAX;
  return uint64_t{1} << i;
}

void HistogramData::Merge(const HistogramData& other) {
  for (int i = 0; i < kBuckets; i++) buckets[i] += other.buckets[i];
  count += other.count;
  sum += other.sum;
  if (other.max > max) max = other.max;
}

HistogramData HistogramData::Minus(const HistogramData& earlier) const {
  HistogramData d = *this;
  for (int i = 0; i < kBuckets; i++) {
    d.buckets[i] = buckets[i] >= earlier.buckets[i] ? buckets[i] - earlier.buckets[i] : 0;
  }
  d.count = count >= earlier.count ? count - earlier.count : 0;
  d.sum = sum >= earlier.sum ? sum - earlier.sum : 0;
  return d;
}

double HistogramData::SumShareAtLeast(uint64_t threshold) const {
  if (sum == 0) return 0.0;
  uint64_t below_at_most = 0;
  for (int i = 0; i < kBuckets && BucketLow(i) < threshold; i++) {
    below_at_most += buckets[i] * (std::min(BucketHigh(i), threshold) - 1);
  }
  return std::max(0.0, 1.0 - static_cast<double>(below_at_most) / static_cast<double>(sum));
}

uint64_t HistogramData::Quantile(double q) const {
  if (count == 0) return 0;
  if (q < 0) q = 0;
  if (q > 1) q = 1;
  // The rank of the q-quantile, 1-based: the smallest r with r >= q * count.
  uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(count));
  if (static_cast<double>(rank) < q * static_cast<double>(count)) rank++;
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; i++) {
    seen += buckets[i];
    if (seen >= rank) {
      uint64_t high = i == 0 ? 0 : BucketHigh(i) - 1;
      return high < max ? high : max;
    }
  }
  return max;
}

void Histogram::Record(uint64_t value) {
  buckets_[HistogramData::BucketOf(value)].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  uint64_t prev = max_.load(std::memory_order_relaxed);
  while (value > prev && !max_.compare_exchange_weak(prev, value, std::memory_order_relaxed)) {
  }
}

HistogramData Histogram::Read() const {
  HistogramData d;
  for (int i = 0; i < HistogramData::kBuckets; i++) {
    d.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
  }
  d.count = count_.load(std::memory_order_relaxed);
  d.sum = sum_.load(std::memory_order_relaxed);
  d.max = max_.load(std::memory_order_relaxed);
  return d;
}

}  // namespace arcstore::stats
