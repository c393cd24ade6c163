// WTinyLfuSim: W-TinyLFU of Einziger, Friedman & Manes (TOS 2017) with an
// adaptive window (Caffeine's idea of hill climbing), page-granular.
//
//   miss -> window (LRU, w pages) --tail = candidate--> duel with main's victim
//                                    |                  (probation's LRU page):
//                                    |                  the higher sketch estimate
//                                    v                  stays, ties keep the victim
//   main = probation (LRU) --hit--> protected (LRU, 80% of main)
//                           <-protected's LRU when protected is over its share
//
// FrequencySketch: a count-min sketch of 4 rows of 4-bit counters (one byte
// each here, saturating at 15), width the next power of two >= 4c (so a
// counter has counted about 2.5 keys when the sketch ages); every
// request increments the key's 4 counters; after sample_multiple x c
// increments every counter is halved (aging), so the estimate follows the
// recent past. No doorkeeper: it only saves sketch memory, at the cost of
// one extra count of error.
//
// Hill climbing: every climb_period_multiple x c requests the hit ratio of
// the period is compared with the previous one; the window moves one step in
// the same direction if it improved, the other way if it got worse; the step
// starts at 6.25% of c, decays by 0.98 each period and restarts when the hit
// ratio moved by 5 points or more. The window stays in [1, c - 1] pages.
//
// Invariants: window + probation + protected <= c; protected <= its share
// after each request; counters <= 15.
//
// Thread-safety: none; one simulator per thread.
#pragma once

#include <cstdint>
#include <memory>

#include "arc/flat_table.h"
#include "base/result.h"
#include "tools/sim/page_list.h"

namespace arcstore::sim {

class FrequencySketch {
 public:
  FrequencySketch(uint64_t cache_pages, uint64_t sample_multiple);
  void Increment(uint64_t key);
  uint32_t Estimate(uint64_t key) const;
  uint64_t resets() const { return resets_; }

 private:
  uint64_t Index(uint64_t key, int row) const;

  uint64_t mask_;
  std::unique_ptr<uint8_t[]> counters_;  // 4 rows of mask_ + 1
  uint64_t sample_size_;
  uint64_t additions_ = 0;
  uint64_t resets_ = 0;
};

struct WTinyLfuOptions {
  uint64_t cache_pages = 0;
  double initial_window_fraction = 0.01;
  double protected_fraction = 0.80;
  uint64_t sample_multiple = 10;
  uint64_t climb_period_multiple = 10;
  bool climb = true;
  Status Validate() const;
};

class WTinyLfuSim {
 public:
  explicit WTinyLfuSim(const WTinyLfuOptions& options);  // options must Validate()

  bool Access(uint64_t key);
  uint64_t hits() const { return hits_; }
  uint64_t resident() const { return window_.size() + probation_.size() + protected_.size(); }
  uint64_t window_pages() const { return window_max_; }
  Status CheckInvariants() const;

 private:
  enum : Where { kWindow = 1, kProbation, kProtected };
  void OnHit(PageNode* n);
  void Rebalance();
  void Duel(PageNode* candidate);
  void EvictAny();
  void Forget(PageNode* n);
  void DemoteProtected();
  void Climb(bool hit);

  const WTinyLfuOptions options_;
  const uint64_t c_;
  uint64_t window_max_;
  uint64_t protected_max_;
  NodePool pool_;
  arc::FlatTable<PageNode> table_;
  FrequencySketch sketch_;
  PageList window_, probation_, protected_;
  uint64_t hits_ = 0;
  // Hill climber state.
  double window_target_;
  double step_;
  double previous_ratio_ = -1;
  uint64_t period_requests_ = 0;
  uint64_t period_hits_ = 0;
};

}  // namespace arcstore::sim
