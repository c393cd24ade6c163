// Duet: arcstore's scan-resistant adaptive replacement policy, page-granular
// (the model, invariants and tunables are in duet.cc's theory comment).
//
// One resident set of at most c pages, ordered at once by ARC and by LIRS
// (duet_orders.h); whichever of the two is winning a duel of miniature
// simulations on a sample of the keys chooses every victim. Used by
// `arcstore sim --policy duet`; the engine still runs ArcPolicy (policy.h).
//
// Thread-safety: none; one Duet per thread. Owns all of its state.
#pragma once

#include <cstdint>
#include <memory>

#include "arc/duet_nodes.h"
#include "arc/duet_orders.h"
#include "base/result.h"

namespace arcstore::arc {

enum class DuetLeader : uint8_t { kArc = 0, kLirs };

struct DuetOptions {
  uint64_t cache_pages = 0;
  // The shadows hold about this many pages: one key in
  // max(1, cache_pages / shadow_pages) is sampled into them.
  uint64_t shadow_pages = 2048;
  // The selector saturates at +-selector_limit: it weighs about the last
  // selector_limit sampled requests on which the shadows disagreed.
  int32_t selector_limit = 4096;
  // A disagreement the ARC shadow wins moves the selector this many steps
  // towards ARC, one the LIRS shadow wins one step towards LIRS: LIRS takes
  // the cache only where it wins more than arc_win_weight / (1 +
  // arc_win_weight) of the disagreements (2: two thirds).
  int32_t arc_win_weight = 2;
  // Tests only: one ordering leads throughout, the selector is ignored.
  bool fixed_leader = false;
  DuetLeader leader = DuetLeader::kArc;
  Status Validate() const;
};

struct DuetStats {
  uint64_t requests = 0;
  uint64_t hits = 0;
  uint64_t evictions_by_arc = 0;
  uint64_t evictions_by_lirs = 0;
  uint64_t leader_switches = 0;
  uint64_t sampled = 0;
  uint64_t shadow_arc_hits = 0;
  uint64_t shadow_lirs_hits = 0;
};

class Duet {
 public:
  explicit Duet(const DuetOptions& options);  // options must Validate()
  ~Duet();

  // One reference to `key`; true on a hit.
  bool Access(uint64_t key);

  uint64_t hits() const { return stats_.hits; }
  uint64_t resident() const { return arc_.resident(); }
  uint64_t tracked() const { return nodes_.size(); }
  DuetLeader leader() const { return leader_; }
  int32_t selector() const { return selector_; }
  uint64_t sample_every() const { return sample_every_; }
  const DuetStats& stats() const { return stats_; }
  const ArcOrder& arc_order() const { return arc_; }
  const LirsOrder& lirs_order() const { return lirs_; }
  Status CheckInvariants() const;

 private:
  struct Shadows;
  bool Sampled(uint64_t key) const;  // Mix(key) % sample_every_ == 0
  void Duel(uint64_t key);

  const DuetOptions options_;
  const uint64_t c_;
  const uint64_t sample_every_;
  const uint64_t sample_mask_;  // sample_every_ - 1 if a power of two, else 0
  DuetNodes nodes_;             // before the orderings, which hold it as their hooks
  ArcOrder arc_;
  LirsOrder lirs_;
  std::unique_ptr<Shadows> shadows_;
  DuetLeader leader_;
  int32_t selector_ = 0;
  DuetStats stats_;
};

}  // namespace arcstore::arc
