// Stat primitives: Counter (sharded, monotonic), Gauge, log2 Histogram.
//
// Every subsystem declares its stats once in a stats::Registry (registry.h)
// with a name, kind, unit and help text, and keeps the returned pointers for
// its hot paths. All primitives are lock-free and safe to update from any
// thread; reads are approximate while updates race (each shard/bucket is
// exact, the sum is a moment's view).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace arcstore::stats {

enum class Kind { kCounter, kGauge, kHistogram };
enum class Unit { kNone, kBytes, kNanoseconds, kOps, kPercent };

std::string_view KindName(Kind kind);
std::string_view UnitName(Unit unit);

// A monotonic counter, sharded across cache lines so that threads on
// different cores do not contend on one atomic.
class Counter {
 public:
  static constexpr int kShards = 16;
  void Add(uint64_t n = 1);
  uint64_t Value() const;

 private:
  struct alignas(64) Shard {
    std::atomic<uint64_t> v{0};
  };
  std::array<Shard, kShards> shards_;
};

// A value that goes up and down (sizes, depths, targets).
class Gauge {
 public:
  void Set(int64_t v) { v_.store(v, std::memory_order_relaxed); }
  void Add(int64_t d) { v_.fetch_add(d, std::memory_order_relaxed); }
  int64_t Value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> v_{0};
};

// A histogram's contents. Bucket 0 counts the value 0; bucket i (1..64)
// counts values in [2^(i-1), 2^i). Also the count, sum and exact maximum.
struct HistogramData {
  static constexpr int kBuckets = 65;
  std::array<uint64_t, kBuckets> buckets{};
  uint64_t count = 0;
  uint64_t sum = 0;
  uint64_t max = 0;

  static int BucketOf(uint64_t value);
  // Smallest value of bucket i, and the smallest value of bucket i+1.
  static uint64_t BucketLow(int i);
  static uint64_t BucketHigh(int i);

  void Merge(const HistogramData& other);
  // Counts of `this` minus `earlier` (max stays this one's).
  HistogramData Minus(const HistogramData& earlier) const;
  // The upper bound of the bucket that holds the q-quantile, q in [0, 1];
  // clamped to max. 0 for an empty histogram.
  uint64_t Quantile(double q) const;
  // The share of `sum` in values of at least `threshold` (a power of two),
  // a lower bound: every smaller value counts as its bucket's largest.
  // 0 for an empty histogram.
  double SumShareAtLeast(uint64_t threshold) const;
  double Mean() const { return count == 0 ? 0.0 : static_cast<double>(sum) / static_cast<double>(count); }
};

class Histogram {
 public:
  void Record(uint64_t value);
  HistogramData Read() const;

 private:
  std::array<std::atomic<uint64_t>, HistogramData::kBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_{0};
  std::atomic<uint64_t> max_{0};
};

}  // namespace arcstore::stats
