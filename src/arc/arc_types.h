// The ARC's vocabulary: keys, holder kinds, access kinds, overflow levels
// the causes of changes of the target c, and the replacement policies.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace arcstore::arc {

// A buffer's identity: a block of a volume. Level 0 holds data records,
// levels >= 1 the indirect blocks above them.
struct ArcKey {
  uint64_t volume_guid = 0;
  uint64_t block_id = 0;
  uint32_t level = 0;

  bool operator==(const ArcKey&) const = default;
  uint64_t Hash() const;
  std::string ToString() const;  // "vol 0x1f level 0 block 42"
};

// Where a buffer's bytes are kept on stable storage, as its filler or
// publisher names it: two words the ARC stores and hands to the eviction
// sink (EvictionSink, arc.h) without reading them. The pool gives a block's
// (device and offset, birth txg), which name the same bytes for the pool's
// life. birth 0: not known (nothing is offered to the sink).
struct ArcOrigin {
  uint64_t where = 0;
  uint64_t birth = 0;
  bool known() const { return birth != 0; }
  bool operator==(const ArcOrigin&) const = default;
};

// Who holds a buffer. Held bytes are reported per kind, so that a pinned
// cache names its pinner.
enum class HolderKind : uint8_t {
  kHandleCache = 0,  // the volume layer's cache of record handles
  kDirtyRecord,      // a record being written in an open txg (anon)
  kReadInFlight,     // a fill token: the read has not finished
  kSyncWrite,        // the txg sync writing the buffer out
  kNbdRequest,       // an NBD request copying in or out
  kApiUser,          // a C++ API caller
  kIntentLog,        // the intent log: a whole record's write logged by reference
};
inline constexpr int kNumHolderKinds = 7;
// "handle_cache", "dirty_record", "read_in_flight", "sync_write",
// "nbd_request", "api_user", "intent_log".
std::string_view HolderKindName(HolderKind kind);

// Demand reads were asked for; prefetch reads were guessed (arcstats'
// demand_* and prefetch_* counters).
enum class AccessKind : uint8_t { kDemand = 0, kPrefetch };

// How far size is above c, with ovf = max(largest record, c / 256):
// kSome above c + ovf/2 (allocators wake the evictor), kSevere above
// c + 1.5 ovf (allocators wait for eviction).
enum class OverflowLevel : uint8_t { kNone = 0, kSome, kSevere };
std::string_view OverflowLevelName(OverflowLevel level);

// Why c changed.
enum class TargetCause : uint8_t {
  kGrow = 0,      // size was near c and memory was free
  kPressure,      // the monitor reported memory pressure: one shrink step
  kLimit,         // the memory limit moved, and c_max with it
  kSet,           // a configured cap (SetMaxBytes)
  kShrinkStopped, // not a change: pressure persists but shrinking frees nothing
};
inline constexpr int kNumTargetCauses = 5;
// "grow", "pressure", "limit", "set", "shrink_stopped".
std::string_view TargetCauseName(TargetCause cause);

// Which policy chooses the ARC's victims (cache_policy.h): ARC alone, or
// Duet (ARC and LIRS, led by whichever wins the duel of duet.h).
enum class PolicyKind : uint8_t { kArc = 0, kDuet };
// "arc", "duet".
std::string_view PolicyKindName(PolicyKind kind);
// Parses a PolicyKindName; false if `text` is none.
bool ParsePolicyKind(std::string_view text, PolicyKind* out);

}  // namespace arcstore::arc
