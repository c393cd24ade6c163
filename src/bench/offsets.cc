#include "bench/offsets.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace arcstore::bench {
namespace {

uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr uint64_t kMaxZipfItems = 10'000'000;  // fio's cap on the zeta sum

}  // namespace

RandomMap::RandomMap(uint64_t units)
    : units_(units), bits_((units + 63) / 64, 0), full_((bits_.size() + 63) / 64, 0) {}

void RandomMap::Clear() {
  std::fill(bits_.begin(), bits_.end(), 0);
  std::fill(full_.begin(), full_.end(), 0);
  used_ = 0;
}

uint64_t RandomMap::TakeNear(uint64_t hint) {
  const uint64_t nwords = bits_.size();
  uint64_t w = (hint % units_) / 64;
  uint64_t bit = hint % 64;
  for (uint64_t scanned = 0; scanned <= nwords; scanned++) {
    // Skip runs of full words through the summary.
    if ((full_[w / 64] >> (w % 64)) & 1) {
      uint64_t sw = w / 64;
      uint64_t mask = full_[sw] | ((uint64_t{1} << (w % 64)) - 1);
      if (~mask != 0) {
        w = sw * 64 + static_cast<uint64_t>(std::countr_zero(~mask));
      } else {
        w = (sw + 1) * 64;
      }
      if (w >= nwords) w = 0;
      bit = 0;
      continue;
    }
    uint64_t valid = (w == nwords - 1 && units_ % 64) ? (uint64_t{1} << (units_ % 64)) - 1 : ~0ull;
    uint64_t free_bits = ~bits_[w] & valid & ~((uint64_t{1} << bit) - 1);
    if (free_bits == 0) {
      w = w + 1 == nwords ? 0 : w + 1;
      bit = 0;
      continue;
    }
    int b = std::countr_zero(free_bits);
    bits_[w] |= uint64_t{1} << b;
    if ((bits_[w] & valid) == valid) full_[w / 64] |= uint64_t{1} << (w % 64);
    used_++;
    return w * 64 + static_cast<uint64_t>(b);
  }
  ARC_CHECK(false) << "RandomMap::TakeNear on a full map";
  return 0;
}

IoPlanner::IoPlanner(const Job& job, uint64_t region_start, uint64_t region_bytes, uint64_t seed)
    : job_(job),
      region_start_(region_start),
      region_bytes_(region_bytes),
      unit_bytes_(std::max<uint64_t>(
          1, std::min({job.Reads() ? job.MinBlockBytes(kRead) : UINT64_MAX,
                       job.Writes() ? job.MinBlockBytes(kWrite) : UINT64_MAX,
                       job.Trims() ? job.MinBlockBytes(kTrim) : UINT64_MAX}))),
      units_(std::max<uint64_t>(1, region_bytes / unit_bytes_)),
      rng_(seed),
      map_(job.IsRandom() && !job.norandommap && job.distribution == Distribution::kRandom ? units_
                                                                                          : 1),
      use_map_(job.IsRandom() && !job.norandommap && job.distribution == Distribution::kRandom) {
  center_off_ = static_cast<uint64_t>(job.distribution_center * static_cast<double>(units_));
  if (job.distribution == Distribution::kZipf) {
    zipf_n_ = std::min(units_, kMaxZipfItems);
    double theta = job.distribution_param;
    zipf_zetan_ = 0;
    for (uint64_t i = 1; i <= zipf_n_; i++) zipf_zetan_ += std::pow(1.0 / static_cast<double>(i), theta);
    zipf_zeta2_ = 1.0 + std::pow(0.5, theta);
    zipf_alpha_ = 1.0 / (1.0 - theta);
    zipf_eta_ = (1.0 - std::pow(2.0 / static_cast<double>(zipf_n_), 1.0 - theta)) /
                (1.0 - zipf_zeta2_ / zipf_zetan_);
  }
}

void IoPlanner::NewPass() {
  issued_bytes_ = 0;
  for (auto& p : seq_pos_) p = 0;
  run_left_ = 0;
  if (use_map_) map_.Clear();
}

Dir IoPlanner::PickDir() {
  if (job_.Trims()) return kTrim;
  if (job_.Reads() && job_.Writes()) {
    return rng_.Uniform(100) < job_.rwmixread ? kRead : kWrite;
  }
  return job_.Reads() ? kRead : kWrite;
}

uint64_t IoPlanner::PickSize(Dir d) {
  if (!job_.bssplit[d].empty()) {
    uint64_t r = rng_.Uniform(100);
    uint64_t acc = 0;
    for (const auto& e : job_.bssplit[d]) {
      acc += e.percent;
      if (r < acc) return e.bs_bytes;
    }
    return job_.bssplit[d].back().bs_bytes;
  }
  if (job_.bsrange[d].min_bytes != 0) {
    // fio picks a multiple of the minimum inside the range.
    uint64_t lo = job_.bsrange[d].min_bytes;
    uint64_t steps = job_.bsrange[d].max_bytes / lo;
    return lo * rng_.Range(1, steps);
  }
  return job_.bs_bytes[d];
}

uint64_t IoPlanner::Scatter(uint64_t rank) const {
  return (Mix64(rank) + center_off_) % units_;
}

uint64_t IoPlanner::PickUnit() {
  switch (job_.distribution) {
    case Distribution::kRandom:
      if (use_map_) return map_.TakeNear(rng_.Uniform(units_));
      return rng_.Uniform(units_);
    case Distribution::kZipf: {
      // Gray et al.'s zipf generator over zipf_n_ ranks.
      double u = rng_.NextDouble();
      double uz = u * zipf_zetan_;
      uint64_t rank;
      if (uz < 1.0) {
        rank = 0;
      } else if (uz < zipf_zeta2_) {
        rank = 1;
      } else {
        double v = static_cast<double>(zipf_n_) *
                   std::pow(zipf_eta_ * u - zipf_eta_ + 1.0, zipf_alpha_);
        rank = std::min<uint64_t>(zipf_n_ - 1, static_cast<uint64_t>(std::max(0.0, v)));
      }
      return Scatter(rank);
    }
    case Distribution::kPareto: {
      double h = job_.distribution_param;
      double pw = std::log(h) / std::log(1.0 - h);
      double v = static_cast<double>(units_ - 1) * std::pow(rng_.NextDouble(), pw);
      return Scatter(static_cast<uint64_t>(v));
    }
    case Distribution::kNormal: {
      // Box-Muller around the center, stddev = param % of the region.
      double u1 = std::max(rng_.NextDouble(), 1e-300), u2 = rng_.NextDouble();
      double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      double x = job_.distribution_center * static_cast<double>(units_) +
                 z * job_.distribution_param / 100.0 * static_cast<double>(units_);
      x = std::clamp(x, 0.0, static_cast<double>(units_ - 1));
      return Scatter(static_cast<uint64_t>(x));
    }
  }
  return 0;
}

IoPlanner::Io IoPlanner::Next() {
  Io io;
  io.dir = PickDir();
  io.length = std::min(PickSize(io.dir), region_bytes_);
  uint64_t rel;
  if (!job_.IsRandom()) {
    uint64_t& pos = seq_pos_[io.dir];
    if (pos + io.length > region_bytes_) pos = 0;
    rel = pos;
    pos += io.length + job_.rw_seq_skip_bytes;
  } else if (run_left_ > 0 && run_next_ + io.length <= region_bytes_) {
    rel = run_next_;
    run_left_--;
    run_next_ += io.length;
  } else {
    if (use_map_ && map_.Full()) map_.Clear();
    rel = PickUnit() * unit_bytes_;
    if (rel + io.length > region_bytes_) {
      rel = (region_bytes_ - io.length) / unit_bytes_ * unit_bytes_;
    }
    run_left_ = job_.rw_random_run - 1;
    run_next_ = rel + io.length;
  }
  issued_bytes_ += io.length;
  io.offset = region_start_ + rel;
  return io;
}

}  // namespace arcstore::bench
