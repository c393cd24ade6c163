#include "bench/latency.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace arcstore::bench {

void RunningStat::Add(double v) {
  if (n_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  n_++;
  double delta = v - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (v - mean_);
}

void RunningStat::Merge(const RunningStat& o) {
  if (o.n_ == 0) return;
  if (n_ == 0) {
    *this = o;
    return;
  }
  double n = static_cast<double>(n_ + o.n_);
  double delta = o.mean_ - mean_;
  mean_ += delta * static_cast<double>(o.n_) / n;
  m2_ += o.m2_ + delta * delta * static_cast<double>(n_) * static_cast<double>(o.n_) / n;
  n_ += o.n_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

double RunningStat::stddev() const {
  if (n_ < 2) return 0;
  return std::sqrt(m2_ / static_cast<double>(n_ - 1));
}

int PlatHistogram::IndexOf(uint64_t v) {
  if (v < 2 * kPerGroup) return static_cast<int>(v);
  int msb = 63 - std::countl_zero(v);
  int error_bits = msb - kBits;
  int base = (error_bits + 1) << kBits;
  int offset = static_cast<int>((v >> error_bits) & (kPerGroup - 1));
  return std::min(base + offset, kBuckets - 1);
}

uint64_t PlatHistogram::ValueOf(int index) {
  if (index < 2 * kPerGroup) return static_cast<uint64_t>(index);
  int error_bits = (index >> kBits) - 1;
  uint64_t base = uint64_t{1} << (error_bits + kBits);
  uint64_t k = static_cast<uint64_t>(index % kPerGroup);
  return base + static_cast<uint64_t>((static_cast<double>(k) + 0.5) *
                                      static_cast<double>(uint64_t{1} << error_bits));
}

void PlatHistogram::Merge(const PlatHistogram& o) {
  for (int i = 0; i < kBuckets; i++) counts_[i] += o.counts_[i];
  total_ += o.total_;
}

std::vector<uint64_t> PlatHistogram::Percentiles(const std::vector<double>& percentiles) const {
  std::vector<uint64_t> out(percentiles.size(), 0);
  if (total_ == 0) return out;
  // Walk the buckets once, in the order of the sorted percentiles.
  std::vector<size_t> order(percentiles.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return percentiles[a] < percentiles[b]; });
  size_t j = 0;
  uint64_t sum = 0;
  for (int i = 0; i < kBuckets && j < order.size(); i++) {
    sum += counts_[i];
    while (j < order.size() &&
           static_cast<double>(sum) >= percentiles[order[j]] / 100.0 * static_cast<double>(total_)) {
      out[order[j]] = ValueOf(i);
      j++;
    }
  }
  return out;
}

namespace {
constexpr uint64_t kBounds[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
constexpr uint64_t kMsBounds[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000};

int BandOf(uint64_t v) {
  int i = 0;
  while (i < 10 && v >= kBounds[i]) i++;
  return std::min(i, 9);
}
}  // namespace

const std::array<const char*, LatencyBands::kNs>& LatencyBands::Labels() {
  static const std::array<const char*, kNs> k = {"2",   "4",   "10",  "20",  "50",
                                                 "100", "250", "500", "750", "1000"};
  return k;
}

const std::array<const char*, LatencyBands::kMs>& LatencyBands::MsLabels() {
  static const std::array<const char*, kMs> k = {"2",   "4",   "10",  "20",   "50",   "100",
                                                 "250", "500", "750", "1000", "2000", ">=2000"};
  return k;
}

void LatencyBands::Add(uint64_t v) {
  total++;
  if (v < 1000) {
    ns[BandOf(v)]++;
  } else if (v < 1000000) {
    us[BandOf(v / 1000)]++;
  } else {
    uint64_t m = v / 1000000;
    int i = 0;
    while (i < 11 && m >= kMsBounds[i]) i++;
    ms[i]++;
  }
}

void LatencyBands::Merge(const LatencyBands& o) {
  for (int i = 0; i < kNs; i++) ns[i] += o.ns[i];
  for (int i = 0; i < kUs; i++) us[i] += o.us[i];
  for (int i = 0; i < kMs; i++) ms[i] += o.ms[i];
  total += o.total;
}

}  // namespace arcstore::bench
