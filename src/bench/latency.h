// Latency and rate statistics, kept as fio keeps them.
//
// RunningStat: min, max, mean and sample standard deviation (n - 1, as fio's
// stddev), by Welford's method; two stats merge exactly (Chan et al.).
//
// PlatHistogram: fio's log-linear latency histogram, so percentiles match
// fio's to the bucket. Values (ns) below 128 have a bucket each; above, each
// power of two [2^m, 2^(m+1)) is cut into 64 equal buckets (6 bits of
// precision, relative error under 1/128). 29 groups cover up to ~2^34 ns
// (17 s); larger values share the last bucket. A bucket's reported value is
// its midpoint, and a percentile is the first bucket where the running count
// reaches p% of the total: fio's own bucketing, not exact sorted samples.
//
// Thread-safety: none; each worker owns its own and the runner merges them
// after the workers stop.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace arcstore::bench {

class RunningStat {
 public:
  void Add(double v);
  void Merge(const RunningStat& o);
  uint64_t n() const { return n_; }
  double min() const { return n_ ? min_ : 0; }
  double max() const { return n_ ? max_ : 0; }
  double mean() const { return n_ ? mean_ : 0; }
  double stddev() const;

 private:
  uint64_t n_ = 0;
  double min_ = 0, max_ = 0, mean_ = 0, m2_ = 0;
};

class PlatHistogram {
 public:
  static constexpr int kBits = 6;
  static constexpr int kPerGroup = 1 << kBits;  // 64
  static constexpr int kGroups = 29;
  static constexpr int kBuckets = kGroups * kPerGroup;  // 1856

  static int IndexOf(uint64_t value_ns);
  // The midpoint of bucket `index` (its exact value below 128).
  static uint64_t ValueOf(int index);

  void Add(uint64_t value_ns) {
    counts_[IndexOf(value_ns)]++;
    total_++;
  }
  void Merge(const PlatHistogram& o);
  uint64_t total() const { return total_; }
  uint64_t count(int index) const { return counts_[index]; }
  // One value per entry of `percentiles` (each in (0, 100]), in that order.
  std::vector<uint64_t> Percentiles(const std::vector<double>& percentiles) const;

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t total_ = 0;
};

// fio's "lat (nsec/usec/msec)" distribution: the share of I/Os under each
// bound. Bounds are 2,4,10,20,50,100,250,500,750,1000 in ns and in us, and
// 2..2000 and ">=2000" in ms.
struct LatencyBands {
  static constexpr int kNs = 10, kUs = 10, kMs = 12;
  std::array<uint64_t, kNs> ns{};
  std::array<uint64_t, kUs> us{};
  std::array<uint64_t, kMs> ms{};
  uint64_t total = 0;

  static const std::array<const char*, kMs>& MsLabels();
  static const std::array<const char*, kNs>& Labels();
  void Add(uint64_t value_ns);
  void Merge(const LatencyBands& o);
};

}  // namespace arcstore::bench
