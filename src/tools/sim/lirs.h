// LirsSim: LIRS of Jiang & Zhang (SIGMETRICS '02), page-granular, as a
// cache on its own. The policy is arc::LirsOrder (arc/duet_orders.h, the
// stack S, the queue Q and the rules in duet_lirs_order.cc), the one LIRS
// that Duet runs too; LirsSim adds the index and the nodes, and evicts Q's
// oldest page whenever a miss finds c pages resident.
//
// Lhirs = max(1, hir_fraction x c) pages are for resident HIR, Llirs = c -
// Lhirs. The paper leaves S unbounded; here non-resident entries are capped
// at nonresident_multiple x c (the oldest non-resident leaves S first),
// which bounds memory at (1 + nonresident_multiple) x c nodes.
//
// Thread-safety: none; one simulator per thread.
#pragma once

#include <cstdint>

#include "arc/duet_orders.h"
#include "arc/flat_table.h"
#include "base/result.h"

namespace arcstore::sim {

using LirsOptions = arc::LirsOrderOptions;

class LirsSim final : private arc::OrderHooks {
 public:
  explicit LirsSim(const LirsOptions& options);  // options must Validate()

  bool Access(uint64_t key);
  uint64_t hits() const { return hits_; }
  uint64_t resident() const { return order_.resident(); }
  uint64_t lir_pages() const { return order_.lir(); }
  uint64_t nonresident() const { return order_.nonresident(); }
  Status CheckInvariants() const;

 private:
  // A non-resident entry left S, or a page not in S was evicted.
  void OnForgotten(arc::OrderNode* n) override;

  const uint64_t c_;
  arc::FixedPool<arc::OrderNode> pool_;  // the arc_ fields stay empty
  arc::FlatIndex<arc::OrderNode> index_;
  arc::LirsOrder order_;
  arc::OrderNode* pinned_ = nullptr;  // the request's node, kept while room is made
  uint64_t hits_ = 0;
};

}  // namespace arcstore::sim
