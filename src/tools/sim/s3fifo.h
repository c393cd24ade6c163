// S3FifoSim: S3-FIFO of Yang et al. (SOSP '23), page-granular.
//
//   miss, key unknown --> S (small FIFO, 10% of c) --tail, freq >= move_threshold--> M
//                         |                         \-tail, otherwise--> G (ghost FIFO, keys)
//   miss, key in G -----> M (main FIFO, the rest of c)
//   M's tail: freq > 0 -> back to M's head with freq - 1 (a CLOCK-like second chance);
//             freq = 0 -> evicted, forgotten
//   a hit only raises freq (capped at 3); nothing moves on a hit
//
// Room is made from S while S holds at least its share of c, else from M.
// G remembers as many keys as M's share of c. The paper states the ghost and
// the 10% split; move_threshold = 1 (moved to M when reused once in S) is
// the text's rule of one reuse.
//
// Invariants: |S| + |M| <= c, |G| <= c - small, freq <= 3.
//
// Thread-safety: none; one simulator per thread.
#pragma once

#include <cstdint>

#include "arc/flat_table.h"
#include "base/result.h"
#include "tools/sim/page_list.h"

namespace arcstore::sim {

struct S3FifoOptions {
  uint64_t cache_pages = 0;
  double small_fraction = 0.10;
  uint8_t move_threshold = 1;
  Status Validate() const;
};

class S3FifoSim {
 public:
  explicit S3FifoSim(const S3FifoOptions& options);  // options must Validate()

  bool Access(uint64_t key);
  uint64_t hits() const { return hits_; }
  uint64_t resident() const { return small_.size() + main_.size(); }
  uint64_t ghosts() const { return ghost_.size(); }
  Status CheckInvariants() const;

 private:
  enum : Where { kSmall = 1, kMain, kGhost };
  void MakeRoom();
  void EvictSmall();
  void EvictMain();
  void Forget(PageNode* n);

  const uint64_t c_;
  const uint64_t small_target_;
  const uint64_t ghost_max_;
  const uint8_t move_threshold_;
  NodePool pool_;
  arc::FlatTable<PageNode> table_;
  PageList small_, main_, ghost_;
  uint64_t hits_ = 0;
};

}  // namespace arcstore::sim
