// Duet: arcstore's scan-resistant adaptive replacement policy, page-granular
// (the model, invariants and tunables are in duet.cc's theory comment).
//
// One resident set of at most c pages, ordered at once by ARC and by LIRS
// (duet_orders.h); whichever of the two is winning a duel of miniature
// simulations on a sample of the keys chooses every victim. Used by
// `arcstore sim --policy duet`; the engine runs the same idea, in bytes,
// over its own ArcPolicy (cache_policy.h), with the same DuetDuel.
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
  uint64_t shadow_pages = 512;
  // The selector saturates at +-selector_limit: it weighs about the last
  // selector_limit sampled requests on which the shadows disagreed.
  int32_t selector_limit = 4096;
  // A disagreement the ARC shadow wins moves the selector this many steps
  // towards ARC, one the LIRS shadow wins one step towards LIRS: LIRS takes
  // the cache only where it wins more than arc_win_weight / (1 +
  // arc_win_weight) of the disagreements (2: two thirds).
  int32_t arc_win_weight = 2;
  // Until the shadows first disagree, scouts a 1/scout_divisor of their
  // size duel the same way and name the leader; 0: no scouts (ARC leads
  // until the shadows disagree).
  uint64_t scout_divisor = 4;
  // Tests only: one ordering leads throughout, the selector is ignored.
  bool fixed_leader = false;
  DuetLeader leader = DuetLeader::kArc;
  Status Validate() const;
};

struct DuetDuelStats {
  uint64_t sampled = 0;
  uint64_t shadow_arc_hits = 0;
  uint64_t shadow_lirs_hits = 0;
  uint64_t leader_switches = 0;
  uint64_t resizes = 0;
  uint64_t scout_sampled = 0;  // references the scouts played
  uint64_t scout_disagreements = 0;
};

// The duel that names Duet's leader: a miniature ARC and a miniature LIRS
// on one key in R (by hash), each evicting for itself, and the selector
// their disagreements move; until those shadows first disagree, a smaller
// pair (the scouts) on the same keys moves a selector of its own, which
// names the leader meanwhile. Shared by the sim's Duet and the engine's
// (cache_policy.h), which resizes it as its c moves.
class DuetDuel {
 public:
  // For a cache of `cache_pages` pages; uses options' shadow_pages,
  // selector_limit and arc_win_weight.
  DuetDuel(const DuetOptions& options, uint64_t cache_pages);
  ~DuetDuel();

  static uint64_t Mix(uint64_t x) {
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  }
  bool Sampled(uint64_t key) const {
    const uint64_t h = Mix(key);
    return sample_mask_ != 0 ? (h & sample_mask_) == 0 : h % sample_every_ == 0;
  }
  // A reference to a sampled key: both shadows see it, and the selector
  // moves if one hit and the other missed; while they have never
  // disagreed, the scouts see it too, and their selector moves likewise.
  void Reference(uint64_t key);
  // New shadows (and scouts while they lead), empty, for a cache of
  // `cache_pages` pages; the selectors and the stats stay.
  void Resize(uint64_t cache_pages);

  DuetLeader leader() const { return leader_; }
  // The selector that names the leader: the scouts' while they lead.
  int32_t selector() const { return scouts_ != nullptr ? scout_selector_ : selector_; }
  // Whether the scouts name the leader (the shadows have not disagreed).
  bool scouting() const { return scouts_ != nullptr; }
  uint64_t cache_pages() const { return cache_pages_; }
  uint64_t sample_every() const { return sample_every_; }
  const DuetDuelStats& stats() const { return stats_; }
  Status CheckInvariants() const;

 private:
  struct Shadows;
  // One disagreement moves `selector` (the shadows' or the scouts') towards
  // its winner, and the leader follows it.
  void Vote(int32_t* selector, bool arc_won);
  const int32_t selector_limit_;
  const int32_t arc_win_weight_;
  const uint64_t shadow_pages_;
  const uint64_t scout_divisor_;
  uint64_t cache_pages_ = 0;
  uint64_t sample_every_ = 1;
  uint64_t sample_mask_ = 0;  // sample_every_ - 1 if a power of two, else 0
  std::unique_ptr<Shadows> shadows_;
  std::unique_ptr<Shadows> scouts_;  // until the shadows first disagree
  bool decided_ = false;             // the shadows have disagreed
  DuetLeader leader_ = DuetLeader::kArc;
  int32_t selector_ = 0;
  int32_t scout_selector_ = 0;
  DuetDuelStats stats_;
};

struct DuetStats {
  uint64_t requests = 0;
  uint64_t hits = 0;
  uint64_t evictions_by_arc = 0;
  uint64_t evictions_by_lirs = 0;
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
  DuetLeader leader() const { return options_.fixed_leader ? options_.leader : duel_.leader(); }
  const DuetDuel& duel() const { return duel_; }
  const DuetStats& stats() const { return stats_; }
  const ArcOrder& arc_order() const { return arc_; }
  const LirsOrder& lirs_order() const { return lirs_; }
  Status CheckInvariants() const;

 private:
  const DuetOptions options_;
  const uint64_t c_;
  DuetNodes nodes_;  // before the orderings, which hold it as their hooks
  ArcOrder arc_;
  LirsOrder lirs_;
  DuetDuel duel_;
  DuetStats stats_;
};

}  // namespace arcstore::arc
