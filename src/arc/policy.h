// ArcPolicy: the adaptive replacement policy of Megiddo & Modha (FAST '03,
// Fig. 4), in bytes, as the one piece of code that decides what the ARC keeps.
//
// It owns the four lists of the paper (MRU = T1, MFU = T2, MRU-ghost = B1,
// MFU-ghost = B2) plus the anon state of ZFS (buffers not in the cache:
// dirty records, orphans), the per-state byte accounting (size and evictable
// size, data vs metadata), the target c and the adaptive target p. It does
// not own nodes, keys, data or locks: the caller embeds a PolicyNode in its
// own header, finds it by key, and is told through PolicyHooks when a node
// becomes a ghost (its data can go) or leaves the policy (it can be freed).
//
// Two users, one code:
//  - `arcstore sim` (src/tools/sim) runs it with PolicyOptions::Paper(c):
//    REPLACE runs inline on every miss and ghost hit, no refinements, so that
//    the hit counts of the paper's traces come out exactly;
//  - the engine's ARC (arc.h) runs it with synchronous_replace off: the
//    access path only adapts p, promotes and trims ghosts, and the background
//    evictor calls Replace() until the cache is back under c. ZFS's
//    refinements (minimum residence before promotion, a floor on p, list
//    sharding) are options here; c growing and shrinking is the engine's.
//
// The model (sizes in bytes; p is a double in [0, c]):
//
//        MRU-ghost (B1)      MRU (T1)   |   MFU (T2)      MFU-ghost (B2)
//   LRU [.............] <-- [.......] <-p-> [.......] --> [.............] LRU
//        ghosts of T1     seen once      seen twice+      ghosts of T2
//       \_________ L1 <= c __________/
//       \____________________ L1 + L2 <= 2c _____________________________/
//
//   Case I    hit in T1 or T2       -> MFU head (promotion is immediate unless
//                                      min_residence_ns asks otherwise)
//   Case II   hit in B1             -> p += bytes * max(1, B2 / B1), capped at c
//   Case III  hit in B2             -> p -= bytes * max(1, B1 / B2), floored at 0
//             both then REPLACE (sync mode) and go to the MFU head
//   Case IV   miss                  -> keep L1 + bytes <= c (drop B1's LRU, or
//                                      in sync mode T1's LRU) and the total
//                                      <= 2c (drop B2's LRU, then B1's); sync
//                                      mode REPLACEs; the node goes to MRU head
//   REPLACE   evict T1's LRU to B1 when T1 is non-empty and T1 > p, or
//             T1 == p and the request hit B2; otherwise T2's LRU to B2.
//
// Only evictable nodes are on the lists: a pinned node (held, or with I/O in
// flight) counts in its state's size but not in its evictable size, and goes
// back to its list's head when unpinned (as in ZFS). REPLACE falls back to
// the other list when the chosen one has nothing evictable (evict_skip).
//
// Thread-safety: none. The engine calls it under its policy lock; the sim
// from one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arcstore/status.h"

namespace arcstore::arc {

enum class ArcState : uint8_t { kAnon = 0, kMru, kMfu, kMruGhost, kMfuGhost, kNone };
inline constexpr int kNumStates = 5;  // kNone is "not in the policy"
enum class BufKind : uint8_t { kData = 0, kMetadata };
inline constexpr int kNumBufKinds = 2;

// "anon", "mru", "mfu", "mru_ghost", "mfu_ghost", "none" (the arcstats prefixes).
std::string_view StateName(ArcState state);
// "data", "metadata".
std::string_view BufKindName(BufKind kind);

inline bool IsResident(ArcState s) { return s == ArcState::kMru || s == ArcState::kMfu; }
inline bool IsGhost(ArcState s) { return s == ArcState::kMruGhost || s == ArcState::kMfuGhost; }

struct ListLinks {
  ListLinks* prev = nullptr;
  ListLinks* next = nullptr;
};

// The policy's part of a buffer header. The caller sets `bytes`, `kind` and
// `sublist` before handing the node to the policy and leaves the rest alone.
// 32 bytes: the simulator keeps millions of them, so every byte shows in
// its cache footprint.
struct PolicyNode : ListLinks {
  uint64_t access_ns = 0;  // time of the last insert or promotion
  uint32_t bytes = 0;      // logical size (<= kMaxNodeBytes); a ghost keeps the size it had
  ArcState state = ArcState::kNone;
  BufKind kind = BufKind::kData;
  bool on_list = false;    // evictable: linked into its state's list
  uint8_t sublist = 0;     // which sublist of its state (< PolicyOptions::sublists)
};
inline constexpr uint64_t kMaxNodeBytes = UINT32_MAX;
inline constexpr uint32_t kMaxSublists = 256;

struct PolicyOptions {
  uint64_t c_bytes = 0;
  // The paper: REPLACE inline whenever a reference needs room, and delete
  // T1's LRU page outright in case IV(i). The engine turns this off and
  // evicts from a background thread instead.
  bool synchronous_replace = true;
  // ZFS's ARC_MINTIME: an MRU hit promotes only if the node has been resident
  // this long. 0 = immediate promotion (the paper).
  uint64_t min_residence_ns = 0;
  // ZFS's arc_p_min_shift: p stays in [c >> shift, c - (c >> shift)].
  // 0 = p in [0, c] (the paper).
  uint32_t p_min_shift = 0;
  // ZFS's multilists: each state's list is split into this many sublists;
  // a node's sublist is chosen by the caller (from its key), and REPLACE
  // takes the tail of the sublists in turn, so LRU order is only kept per
  // sublist. 1 = one exact LRU list per state (the paper).
  uint32_t sublists = 1;

  // The paper's policy with a fixed c of `c_bytes`, no refinements.
  static PolicyOptions Paper(uint64_t c_bytes);
  Status Validate() const;
};

// Told about nodes the policy lets go. Called synchronously, from inside
// policy calls; a hook must not call back into the policy.
class PolicyHooks {
 public:
  virtual ~PolicyHooks() = default;
  // `node` went from MRU/MFU to the head of its ghost list: its data can go.
  virtual void OnEvicted(PolicyNode* node) = 0;
  // `node` left the policy (state kNone): a ghost trimmed by the bounds, or
  // (sync mode, case IV(i)) T1's LRU page deleted outright. The caller may
  // free it; the policy does not touch it again.
  virtual void OnDropped(PolicyNode* node) = 0;
};

class ArcPolicy {
 public:
  ArcPolicy(const PolicyOptions& options, PolicyHooks* hooks);
  ArcPolicy(const ArcPolicy&) = delete;
  ArcPolicy& operator=(const ArcPolicy&) = delete;

  // ---- The paper's cases -------------------------------------------------

  // Case I: `node` (MRU or MFU) was referenced. MRU -> MFU head (unless it
  // has been resident less than min_residence_ns); MFU -> MFU head. A pinned
  // node changes state only; it reaches its list's head when unpinned.
  void Hit(PolicyNode* node, uint64_t now_ns);

  // Cases II and III, first half: a ghost `node` was referenced. Adapts p and
  // takes the node off its ghost list (state kNone). Returns the ghost state
  // it was in; pass `== kMfuGhost` as Insert's `hit_in_mfu_ghost`.
  ArcState GhostHit(PolicyNode* node);

  // Makes `node` (state kNone, bytes set) resident in `to` (kMru for a miss,
  // kMfu after a ghost hit): first the ghost bounds for its bytes, then (sync
  // mode) REPLACE until it fits under c, then the head of `to`'s list, or no
  // list at all when `pinned`.
  void Insert(PolicyNode* node, ArcState to, bool hit_in_mfu_ghost, uint64_t now_ns,
              bool pinned);

  // REPLACE: evicts one node from MRU or MFU to the head of its ghost list
  // by the tie rule, calls OnEvicted, and returns it; nullptr when neither
  // list has anything evictable.
  PolicyNode* Replace(bool hit_in_mfu_ghost);
  // Evicts `node` (resident and evictable), chosen by another ordering
  // than REPLACE's (cache_policy.h), to the head of its ghost list, and
  // calls OnEvicted.
  void Evict(PolicyNode* node);

  // ---- Engine transitions ------------------------------------------------

  // A node enters anon (never on a list, never evictable).
  void InsertAnon(PolicyNode* node);
  // Moves a pinned resident node to anon (it left the cache but is held).
  void MoveToAnon(PolicyNode* node);
  // Takes `node` out of whatever state it is in, without hooks (state kNone).
  void Remove(PolicyNode* node);
  // Pinned: held or with I/O in flight, so not evictable. Idempotent.
  void Pin(PolicyNode* node);
  void Unpin(PolicyNode* node);
  // Changes c (p is clamped into range, the ghost lists trimmed to the new
  // bounds through OnDropped).
  void SetTarget(uint64_t c_bytes);
  // Drops ghosts until MRU + MRU-ghost <= c and the four lists <= 2c (or
  // the ghost lists are empty).
  void TrimGhosts();

  // ---- Reading -----------------------------------------------------------

  uint64_t c() const { return c_; }
  double p() const { return p_; }
  uint64_t Size(ArcState s) const {
    return size_[Idx(s)][0] + size_[Idx(s)][1];
  }
  uint64_t Size(ArcState s, BufKind k) const { return size_[Idx(s)][Kdx(k)]; }
  uint64_t Evictable(ArcState s, BufKind k) const { return listed_[Idx(s)][Kdx(k)]; }
  uint64_t Evictable(ArcState s) const { return listed_[Idx(s)][0] + listed_[Idx(s)][1]; }
  uint64_t Resident() const { return Size(ArcState::kMru) + Size(ArcState::kMfu); }
  uint64_t ListTotal() const {
    return Resident() + Size(ArcState::kMruGhost) + Size(ArcState::kMfuGhost);
  }
  // REPLACE calls whose chosen list had nothing evictable.
  uint64_t evict_skips() const { return evict_skips_; }
  const PolicyOptions& options() const { return options_; }

  // Walks every list: listed bytes per state and kind match the counters,
  // evictable <= size, ghosts are all listed, anon has no list, every node on
  // a list has that list's state, the ghost bounds hold, p is in range.
  // Pinned nodes are off the lists, so the caller checks Size() against its
  // own nodes.
  Status CheckInvariants() const;
  // Calls `fn(node)` for every listed node of `state`, LRU first.
  template <typename Fn>
  void ForEachListed(ArcState state, Fn fn) const {
    for (const auto& l : lists_[Idx(state)]) {
      for (const ListLinks* x = l.prev; x != &l; x = x->prev) fn(static_cast<const PolicyNode*>(x));
    }
  }

 private:
  static int Idx(ArcState s) { return static_cast<int>(s); }
  static int Kdx(BufKind k) { return static_cast<int>(k); }

  void Adapt(ArcState ghost, uint64_t bytes);
  void ClampP();
  double PMin() const;
  double PMax() const;
  void Account(PolicyNode* n, bool add) {
    uint64_t& v = size_[Idx(n->state)][Kdx(n->kind)];
    v = add ? v + n->bytes : v - n->bytes;
  }
  void Link(PolicyNode* n);
  void Unlink(PolicyNode* n);
  void MoveState(PolicyNode* n, ArcState to);
  // The LRU (tail) of `state`, taking sublists in turn; nullptr if empty.
  PolicyNode* Lru(ArcState state);
  // Removes `n` from the policy and calls OnDropped.
  void Drop(PolicyNode* n);
  bool DropLru(ArcState state);

  PolicyOptions options_;
  PolicyHooks* hooks_;
  uint64_t c_;
  double p_ = 0;
  uint64_t size_[kNumStates][kNumBufKinds] = {};
  uint64_t listed_[kNumStates][kNumBufKinds] = {};
  // lists_[state][sublist]: circular, the sentinel's next is the MRU end.
  std::vector<ListLinks> lists_[kNumStates];
  uint32_t cursor_[kNumStates] = {};
  uint64_t evict_skips_ = 0;
};

}  // namespace arcstore::arc
