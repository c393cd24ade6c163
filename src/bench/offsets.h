// Where and how big each I/O of a job is: direction (rwmix), block size
// (bs, bsrange, bssplit) and offset (sequential, uniform random with or
// without fio's random map, zipf, pareto, normal).
//
// Offsets are chosen in "units" of the smallest block size the job uses,
// inside the region [region_start, region_start + region_bytes). Uniform
// random offsets go through a random map (unless norandommap) so that each
// unit is used once per pass, as fio does; skewed distributions pick a rank
// and scatter it over the region with a hash (as fio does), without the map.
//
// Thread-safety: none; one per worker. All memory is allocated up front.
#pragma once

#include <cstdint>
#include <vector>

#include "base/random.h"
#include "bench/job.h"

namespace arcstore::bench {

// A bitmap of used units with a summary of full words, for "the next free
// unit at or after i" in O(n / 4096) at worst.
class RandomMap {
 public:
  explicit RandomMap(uint64_t units);
  // Marks and returns a free unit at or after `hint` (wrapping). The map must
  // not be full.
  uint64_t TakeNear(uint64_t hint);
  bool Full() const { return used_ == units_; }
  void Clear();

 private:
  uint64_t units_;
  uint64_t used_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<uint64_t> full_;  // bit w set: bits_[w] has no free bit
};

class IoPlanner {
 public:
  IoPlanner(const Job& job, uint64_t region_start, uint64_t region_bytes, uint64_t seed);

  struct Io {
    Dir dir;
    uint64_t offset;
    uint64_t length;
  };
  // The next I/O of the current pass.
  Io Next();
  // True when the current pass has issued its region's worth of bytes.
  bool PassDone() const { return issued_bytes_ >= region_bytes_; }
  // Starts another pass (a new loop, or time_based wrapping).
  void NewPass();
  uint64_t region_bytes() const { return region_bytes_; }

 private:
  Dir PickDir();
  uint64_t PickSize(Dir d);
  uint64_t PickUnit();
  uint64_t Scatter(uint64_t rank) const;

  const Job& job_;
  uint64_t region_start_;
  uint64_t region_bytes_;
  uint64_t unit_bytes_;
  uint64_t units_;
  SeededRandom rng_;
  RandomMap map_;
  bool use_map_;
  uint64_t issued_bytes_ = 0;
  uint64_t seq_pos_[kNumDirs] = {0, 0, 0};
  uint64_t run_left_ = 0;       // rw=randread:N: sequential I/Os left
  uint64_t run_next_ = 0;       // next offset of that run
  double zipf_zetan_ = 0, zipf_eta_ = 0, zipf_alpha_ = 0, zipf_zeta2_ = 0;
  uint64_t zipf_n_ = 0;
  uint64_t center_off_ = 0;
};

}  // namespace arcstore::bench
