// LirsSim: LIRS of Jiang & Zhang (SIGMETRICS '02), page-granular.
//
//   stack S (recency order, top = most recent):  LIR pages, resident HIR pages,
//                                                 non-resident HIR pages
//   queue Q (FIFO):                               resident HIR pages only
//
//   hit  LIR          -> top of S; prune S
//   hit  HIR in S     -> becomes LIR, leaves Q; S's bottom LIR -> HIR, end of Q
//   hit  HIR not in S -> top of S, end of Q
//   miss              -> evict Q's front (it stays in S as non-resident if it
//                        is there); then as for a hit on HIR: LIR if the key
//                        was a non-resident in S, else resident HIR
//   prune             -> pop HIR entries off S's bottom until a LIR page is there
//
// While fewer than Llirs pages are LIR, every new page becomes LIR (warm-up).
// Lhirs = max(1, hir_fraction x c) pages are for resident HIR, Llirs = c - Lhirs.
// The paper leaves S unbounded; here non-resident entries are capped at
// nonresident_multiple x c (the oldest non-resident leaves S first), which
// bounds memory at (1 + nonresident_multiple) x c nodes.
//
// Invariants: |LIR| <= Llirs, |LIR| + |Q| <= c, S's bottom is LIR, every
// non-resident is in S, at most the cap of non-residents.
//
// Thread-safety: none; one simulator per thread.
#pragma once

#include <cstdint>

#include "arc/flat_table.h"
#include "base/result.h"
#include "tools/sim/page_list.h"

namespace arcstore::sim {

struct LirsOptions {
  uint64_t cache_pages = 0;
  double hir_fraction = 0.01;
  double nonresident_multiple = 2.0;
  Status Validate() const;
};

class LirsSim {
 public:
  explicit LirsSim(const LirsOptions& options);  // options must Validate()

  bool Access(uint64_t key);
  uint64_t hits() const { return hits_; }
  uint64_t resident() const { return lir_count_ + q_.size(); }
  uint64_t lir_pages() const { return lir_count_; }
  uint64_t nonresident() const { return nonres_.size(); }
  Status CheckInvariants() const;

 private:
  enum : Where { kLir = 1, kHir, kNonResident };
  PageNode* FromStack(arc::ListLinks* l) const;
  void StackPushTop(PageNode* n);
  void StackRemove(PageNode* n);
  void Prune();
  void DemoteBottomLir();
  void EvictFromQ();
  void Forget(PageNode* n);

  const uint64_t c_;
  const uint64_t lhirs_;
  const uint64_t llirs_;
  const uint64_t max_nonresident_;
  NodePool pool_;
  arc::FlatTable<PageNode> table_;
  arc::ListLinks stack_;  // S's sentinel: next = top, prev = bottom
  uint64_t stack_size_ = 0;
  PageList q_;       // resident HIR, front = newest
  PageList nonres_;  // non-resident HIR in S, front = newest
  uint64_t lir_count_ = 0;
  uint64_t hits_ = 0;
};

}  // namespace arcstore::sim
