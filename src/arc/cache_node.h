// CacheNode: the engine's part of a buffer header that its replacement
// policy (cache_policy.h) owns: ArcPolicy's node, and LIRS's links and state
// for Duet. 88 bytes; the LIRS fields stay empty under the ARC policy.
#pragma once

#include <cstdint>

#include "arc/policy.h"

namespace arcstore::arc {

struct CacheNode : PolicyNode {
  // The key's hash: Duet samples keys for its shadows by it. Set by the
  // owner before the node enters a resident state; fixed while it is in one.
  uint64_t key_hash = 0;
  uint64_t lirs_stamp = 0;  // Duet: the policy's reference count at its last reference
  ListLinks lirs_queue;  // Q (resident HIR), the non-resident list or the provisional LIR list
  ListLinks lirs_stack;  // S
  uint8_t lirs_where = 0;  // OrderNode's kNone, kLir, kHir, kNonResident
};

// LIRS weighs an engine buffer by its bytes and never names a pinned one
// (pinned = resident and off ArcPolicy's lists).
inline uint64_t LirsWeight(const CacheNode& n) { return n.bytes; }
inline bool LirsEvictable(const CacheNode& n) { return n.on_list; }

}  // namespace arcstore::arc
