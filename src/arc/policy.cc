#include "arc/policy.h"

#include <algorithm>
#include <sstream>

#include "base/check.h"

namespace arcstore::arc {

std::string_view StateName(ArcState state) {
  switch (state) {
    case ArcState::kAnon: return "anon";
    case ArcState::kMru: return "mru";
    case ArcState::kMfu: return "mfu";
    case ArcState::kMruGhost: return "mru_ghost";
    case ArcState::kMfuGhost: return "mfu_ghost";
    case ArcState::kNone: return "none";
  }
  return "?";
}

std::string_view BufKindName(BufKind kind) {
  return kind == BufKind::kData ? "data" : "metadata";
}

PolicyOptions PolicyOptions::Paper(uint64_t c_bytes) {
  PolicyOptions o;
  o.c_bytes = c_bytes;
  return o;
}

Status PolicyOptions::Validate() const {
  if (c_bytes == 0) return Status::InvalidArgument("arc policy: c must be > 0 bytes");
  if (sublists == 0 || sublists > kMaxSublists) {
    return Status::InvalidArgument("arc policy: sublists must be in [1, 256], not " +
                                   std::to_string(sublists));
  }
  if (p_min_shift > 16) {
    return Status::InvalidArgument("arc policy: p_min_shift must be <= 16");
  }
  return Status::Ok();
}

ArcPolicy::ArcPolicy(const PolicyOptions& options, PolicyHooks* hooks)
    : options_(options), hooks_(hooks), c_(options.c_bytes) {
  ARC_CHECK(options.Validate().ok()) << options.Validate().ToString();
  for (auto& per_state : lists_) {
    per_state = std::vector<ListLinks>(options.sublists);
    for (auto& l : per_state) l.prev = l.next = &l;
  }
  ClampP();
}

// ---- Lists ------------------------------------------------------------------

void ArcPolicy::Link(PolicyNode* n) {
  ListLinks& head = lists_[Idx(n->state)][n->sublist];
  n->prev = &head;
  n->next = head.next;
  head.next->prev = n;
  head.next = n;
  n->on_list = true;
  listed_[Idx(n->state)][Kdx(n->kind)] += n->bytes;
}

void ArcPolicy::Unlink(PolicyNode* n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->prev = n->next = nullptr;
  n->on_list = false;
  listed_[Idx(n->state)][Kdx(n->kind)] -= n->bytes;
}

void ArcPolicy::MoveState(PolicyNode* n, ArcState to) {
  const bool listed = n->on_list;
  if (listed) Unlink(n);
  Account(n, false);
  n->state = to;
  Account(n, true);
  if (listed) Link(n);
}

PolicyNode* ArcPolicy::Lru(ArcState state) {
  auto& subs = lists_[Idx(state)];
  const uint32_t n = static_cast<uint32_t>(subs.size());
  if (n == 1) {
    ListLinks& head = subs[0];
    return head.prev == &head ? nullptr : static_cast<PolicyNode*>(head.prev);
  }
  uint32_t& cursor = cursor_[Idx(state)];
  for (uint32_t i = 0; i < n; i++) {
    ListLinks& head = subs[(cursor + i) % n];
    if (head.prev != &head) {
      cursor = (cursor + i + 1) % n;
      return static_cast<PolicyNode*>(head.prev);
    }
  }
  return nullptr;
}

void ArcPolicy::Drop(PolicyNode* n) {
  Remove(n);
  hooks_->OnDropped(n);
}

bool ArcPolicy::DropLru(ArcState state) {
  PolicyNode* n = Lru(state);
  if (n == nullptr) return false;
  Drop(n);
  return true;
}

// ---- p ----------------------------------------------------------------------

double ArcPolicy::PMin() const {
  return options_.p_min_shift == 0 ? 0.0 : static_cast<double>(c_ >> options_.p_min_shift);
}

double ArcPolicy::PMax() const {
  return options_.p_min_shift == 0 ? static_cast<double>(c_)
                                   : static_cast<double>(c_ - (c_ >> options_.p_min_shift));
}

void ArcPolicy::ClampP() { p_ = std::min(std::max(p_, PMin()), PMax()); }

// p moves by the hit's bytes times max(1, other ghost / this ghost), in
// double precision and uncapped (ZFS caps the ratio at 10; the paper does
// not). With equal-sized pages this is the paper's page arithmetic scaled by
// the page size, exactly when the page size is a power of two.
void ArcPolicy::Adapt(ArcState ghost, uint64_t bytes) {
  const double b1 = static_cast<double>(Size(ArcState::kMruGhost));
  const double b2 = static_cast<double>(Size(ArcState::kMfuGhost));
  const double s = static_cast<double>(bytes);
  if (ghost == ArcState::kMruGhost) {
    p_ = std::min(PMax(), p_ + s * std::max(b2 / b1, 1.0));
  } else {
    p_ = std::max(PMin(), p_ - s * std::max(b1 / b2, 1.0));
  }
}

// ---- The cases ----------------------------------------------------------------

void ArcPolicy::Hit(PolicyNode* n, uint64_t now_ns) {
  ARC_DCHECK(IsResident(n->state)) << StateName(n->state);
  if (n->state == ArcState::kMru) {
    if (options_.min_residence_ns != 0 && now_ns < n->access_ns + options_.min_residence_ns) {
      return;  // ZFS: a second reference within ARC_MINTIME does not promote
    }
    MoveState(n, ArcState::kMfu);  // relinks it at the MFU head if listed
  } else if (n->on_list) {
    Unlink(n);
    Link(n);
  }
  n->access_ns = now_ns;
}

ArcState ArcPolicy::GhostHit(PolicyNode* n) {
  const ArcState ghost = n->state;
  ARC_DCHECK(IsGhost(ghost)) << StateName(ghost);
  Adapt(ghost, n->bytes);
  Remove(n);
  return ghost;
}

void ArcPolicy::Insert(PolicyNode* n, ArcState to, bool hit_in_mfu_ghost, uint64_t now_ns,
                       bool pinned) {
  ARC_DCHECK(n->state == ArcState::kNone) << StateName(n->state);
  ARC_DCHECK(IsResident(to)) << StateName(to);
  ARC_DCHECK_LT(n->sublist, options_.sublists);
  const uint64_t s = n->bytes;
  const bool sync = options_.synchronous_replace;
  if (to == ArcState::kMru) {
    // Case IV(i): L1 = T1 + B1 must stay <= c. The paper drops B1's LRU when
    // T1 < c, else T1's LRU (no ghost); in bytes, B1 first, then T1.
    while (Size(ArcState::kMru) + Size(ArcState::kMruGhost) + s > c_ &&
           DropLru(ArcState::kMruGhost)) {
    }
    if (sync) {
      while (Size(ArcState::kMru) + Size(ArcState::kMruGhost) + s > c_ &&
             DropLru(ArcState::kMru)) {
      }
    }
  }
  // Case IV(ii): the four lists stay <= 2c; B2's LRU first (the paper), then
  // B1's (only reachable with unequal sizes).
  while (ListTotal() + s > 2 * c_ && DropLru(ArcState::kMfuGhost)) {
  }
  while (ListTotal() + s > 2 * c_ && DropLru(ArcState::kMruGhost)) {
  }
  if (sync) {
    // The cache is full: REPLACE (once, with equal sizes).
    while (Resident() + s > c_ && Resident() > 0 && Replace(hit_in_mfu_ghost) != nullptr) {
    }
  }
  n->state = to;
  n->access_ns = now_ns;
  Account(n, true);
  if (!pinned) Link(n);
}

PolicyNode* ArcPolicy::Replace(bool hit_in_mfu_ghost) {
  const uint64_t t1 = Size(ArcState::kMru);
  const double t1d = static_cast<double>(t1);
  const bool from_mru = t1 > 0 && (t1d > p_ || (hit_in_mfu_ghost && t1d == p_));
  ArcState from = from_mru ? ArcState::kMru : ArcState::kMfu;
  PolicyNode* victim = Lru(from);
  if (victim == nullptr) {
    // Everything in the chosen list is pinned (or it is empty): take the
    // other one rather than evict nothing.
    from = from_mru ? ArcState::kMfu : ArcState::kMru;
    victim = Lru(from);
    if (victim == nullptr) return nullptr;
    evict_skips_++;
  }
  Evict(victim);
  return victim;
}

void ArcPolicy::Evict(PolicyNode* n) {
  ARC_DCHECK(IsResident(n->state) && n->on_list) << StateName(n->state);
  MoveState(n, n->state == ArcState::kMru ? ArcState::kMruGhost : ArcState::kMfuGhost);
  // MoveState relinked it at the head (MRU end) of the ghost list.
  hooks_->OnEvicted(n);
}

// ---- Engine transitions ---------------------------------------------------------

void ArcPolicy::InsertAnon(PolicyNode* n) {
  ARC_DCHECK(n->state == ArcState::kNone) << StateName(n->state);
  n->state = ArcState::kAnon;
  Account(n, true);
}

void ArcPolicy::MoveToAnon(PolicyNode* n) {
  ARC_DCHECK(IsResident(n->state) && !n->on_list) << StateName(n->state);
  MoveState(n, ArcState::kAnon);
}

void ArcPolicy::Remove(PolicyNode* n) {
  if (n->state == ArcState::kNone) return;
  if (n->on_list) Unlink(n);
  Account(n, false);
  n->state = ArcState::kNone;
}

void ArcPolicy::Pin(PolicyNode* n) {
  if (n->on_list) Unlink(n);
}

void ArcPolicy::Unpin(PolicyNode* n) {
  if (!n->on_list && IsResident(n->state)) Link(n);
}

void ArcPolicy::SetTarget(uint64_t c_bytes) {
  ARC_CHECK_GT(c_bytes, 0u);
  c_ = c_bytes;
  ClampP();
  TrimGhosts();
}

void ArcPolicy::TrimGhosts() {
  while (Size(ArcState::kMru) + Size(ArcState::kMruGhost) > c_ && DropLru(ArcState::kMruGhost)) {
  }
  while (ListTotal() > 2 * c_ && DropLru(ArcState::kMfuGhost)) {
  }
  while (ListTotal() > 2 * c_ && DropLru(ArcState::kMruGhost)) {
  }
}

// ---- Checking -------------------------------------------------------------------

Status ArcPolicy::CheckInvariants() const {
  std::ostringstream err;
  for (int s = 0; s < kNumStates; s++) {
    uint64_t listed[kNumBufKinds] = {};
    for (uint32_t sub = 0; sub < lists_[s].size(); sub++) {
      const ListLinks* head = &lists_[s][sub];
      for (const ListLinks* x = head->next; x != head; x = x->next) {
        const auto* n = static_cast<const PolicyNode*>(x);
        if (x->next->prev != x || x->prev->next != x) err << "broken links in " << s << "; ";
        if (Idx(n->state) != s) err << "node of state " << StateName(n->state) << " on list " << s << "; ";
        if (!n->on_list) err << "listed node without on_list; ";
        if (n->sublist != sub) err << "node on the wrong sublist; ";
        listed[Kdx(n->kind)] += n->bytes;
      }
    }
    for (int k = 0; k < kNumBufKinds; k++) {
      const char* name = StateName(static_cast<ArcState>(s)).data();
      if (listed[k] != listed_[s][k]) {
        err << name << " " << k << ": listed " << listed[k] << " != counter " << listed_[s][k] << "; ";
      }
      if (listed_[s][k] > size_[s][k]) {
        err << name << ": evictable " << listed_[s][k] << " > size " << size_[s][k] << "; ";
      }
      if (IsGhost(static_cast<ArcState>(s)) && listed_[s][k] != size_[s][k]) {
        err << name << ": a ghost is off its list; ";
      }
      if (s == Idx(ArcState::kAnon) && listed_[s][k] != 0) err << "anon has a list; ";
    }
  }
  const uint64_t t1 = Size(ArcState::kMru), b1 = Size(ArcState::kMruGhost);
  const uint64_t b2 = Size(ArcState::kMfuGhost);
  if (b1 > 0 && t1 + b1 > c_) err << "MRU + MRU-ghost " << t1 + b1 << " > c " << c_ << "; ";
  if (b1 + b2 > 0 && ListTotal() > 2 * c_) err << "lists " << ListTotal() << " > 2c; ";
  if (!(p_ >= PMin() && p_ <= PMax())) err << "p " << p_ << " outside [" << PMin() << ", " << PMax() << "]; ";
  if (options_.synchronous_replace && Resident() > c_) err << "resident " << Resident() << " > c; ";
  const std::string e = err.str();
  return e.empty() ? Status::Ok() : Status::Internal("arc policy: " + e);
}

}  // namespace arcstore::arc
