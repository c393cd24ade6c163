// ArcOrder and LirsOrder: the two orderings of the resident set that the
// Duet policy (duet.h) keeps side by side, page-granular.
//
// Each keeps its policy's whole state (ARC: T1, T2, B1, B2 and p; LIRS: the
// stack S, the queue Q and the non-resident entries) over the same resident
// set, but neither evicts on its own: on a miss with the cache full the
// owner asks one of them for a Victim(), tells both to Evict() it, then tells
// both to Reference() the new key. Driven by its own victims alone, each is
// exactly its policy (ARC: the paper's Fig. 4 with a real p; LIRS: Jiang &
// Zhang with 1% HIR and non-residents capped at 2c); driven by the other's,
// it keeps a consistent state over whatever stays resident.
//
// Thread-safety: none; owned by one Duet.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "arc/policy.h"
#include "base/result.h"

namespace arcstore::arc {

// A list with a count over intrusive links; front = MRU / newest.
struct OrderNode;
class OrderList {
 public:
  OrderList() { head_.prev = head_.next = &head_; }
  OrderList(const OrderList&) = delete;
  OrderList& operator=(const OrderList&) = delete;
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  OrderNode* front() const;
  OrderNode* back() const;
  void PushFront(OrderNode* n);
  void Remove(OrderNode* n);
  uint64_t CountByWalk() const;

 private:
  ListLinks head_;
  uint64_t size_ = 0;
};

// Links for LIRS's stack S, pointing back at their node.
struct StackLinks : ListLinks {
  OrderNode* owner = nullptr;
};

struct OrderNode : ListLinks {
  uint64_t key = 0;
  uint8_t where = 0;
  bool in_stack = false;
  StackLinks stack;
};

class ArcOrder {
 public:
  explicit ArcOrder(uint64_t cache_pages);

  bool Resident(uint64_t key) const;
  uint64_t resident() const { return t1_.size() + t2_.size(); }
  // A miss on `key`: moves p if `key` is a ghost (the paper's cases II, III).
  void NoteMiss(uint64_t key);
  // The resident page ARC would evict to make room for `key` (REPLACE, or
  // T1's LRU page in case IV(A) when T1 holds c pages). Cache non-empty.
  uint64_t Victim(uint64_t key) const;
  // `key` (resident) leaves the cache: T1 -> B1, T2 -> B2.
  void Evict(uint64_t key);
  // `key` is referenced and is resident afterwards: a hit or ghost goes to
  // T2's MRU end, a new key to T1's; then the ghost bounds are restored.
  void Reference(uint64_t key);

  double p() const { return p_; }
  uint64_t t1() const { return t1_.size(); }
  uint64_t t2() const { return t2_.size(); }
  uint64_t b1() const { return b1_.size(); }
  uint64_t b2() const { return b2_.size(); }
  Status CheckInvariants() const;

 private:
  enum : uint8_t { kT1 = 1, kT2, kB1, kB2 };
  OrderNode* Find(uint64_t key) const;
  OrderList& ListOf(uint8_t where);
  void Move(OrderNode* n, uint8_t to);
  void Drop(OrderList& list);

  const uint64_t c_;
  double p_ = 0;
  OrderList t1_, t2_, b1_, b2_;
  std::unordered_map<uint64_t, OrderNode> nodes_;
};

class LirsOrder {
 public:
  explicit LirsOrder(uint64_t cache_pages);  // >= 2

  bool Resident(uint64_t key) const;
  uint64_t resident() const { return lir_ + q_.size(); }
  // Q's oldest page; S's bottom LIR page if Q is empty. Cache non-empty.
  uint64_t Victim() const;
  // `key` (resident) leaves the cache; a LIR page becomes non-resident in S.
  void Evict(uint64_t key);
  // `key` is referenced and is resident afterwards.
  void Reference(uint64_t key);

  uint64_t lir() const { return lir_; }
  uint64_t nonresident() const { return nonres_.size(); }
  Status CheckInvariants() const;

 private:
  enum : uint8_t { kLir = 1, kHir, kNonResident };
  OrderNode* Find(uint64_t key) const;
  OrderNode* Bottom() const;
  void StackTop(OrderNode* n);
  void StackRemove(OrderNode* n);
  void Prune();
  void DemoteBottom();
  void MakeNonResident(OrderNode* n);
  void Forget(OrderNode* n);
  void ReferenceMiss(OrderNode* n, uint64_t key);

  const uint64_t c_;
  const uint64_t lhirs_;
  const uint64_t llirs_;
  const uint64_t max_nonresident_;
  ListLinks stack_;  // next = top (newest), prev = bottom
  uint64_t stack_size_ = 0;
  OrderList q_;       // resident HIR, front = newest
  OrderList nonres_;  // non-resident HIR, front = newest
  uint64_t lir_ = 0;
  std::unordered_map<uint64_t, OrderNode> nodes_;
};

}  // namespace arcstore::arc
