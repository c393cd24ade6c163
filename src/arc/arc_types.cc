#include <cstdio>

#include "arc/arc_options.h"
#include "arc/arc_types.h"
#include "base/units.h"

namespace arcstore::arc {

uint64_t ArcKey::Hash() const {
  uint64_t x = volume_guid * 0x9E3779B97F4A7C15ULL;
  x ^= block_id + 0x632BE59BD9B4E019ULL + (x << 6) + (x >> 2);
  x ^= (uint64_t{level} << 56) | (uint64_t{level} >> 8);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

std::string ArcKey::ToString() const {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "vol 0x%llx level %u block %llu",
                static_cast<unsigned long long>(volume_guid), level,
                static_cast<unsigned long long>(block_id));
  return buf;
}

std::string_view HolderKindName(HolderKind kind) {
  switch (kind) {
    case HolderKind::kHandleCache: return "handle_cache";
    case HolderKind::kDirtyRecord: return "dirty_record";
    case HolderKind::kReadInFlight: return "read_in_flight";
    case HolderKind::kSyncWrite: return "sync_write";
    case HolderKind::kNbdRequest: return "nbd_request";
    case HolderKind::kApiUser: return "api_user";
    case HolderKind::kIntentLog: return "intent_log";
  }
  return "?";
}

std::string_view OverflowLevelName(OverflowLevel level) {
  switch (level) {
    case OverflowLevel::kNone: return "none";
    case OverflowLevel::kSome: return "some";
    case OverflowLevel::kSevere: return "severe";
  }
  return "?";
}

std::string_view TargetCauseName(TargetCause cause) {
  switch (cause) {
    case TargetCause::kGrow: return "grow";
    case TargetCause::kPressure: return "pressure";
    case TargetCause::kLimit: return "limit";
    case TargetCause::kSet: return "set";
    case TargetCause::kShrinkStopped: return "shrink_stopped";
  }
  return "?";
}

std::string_view PolicyKindName(PolicyKind kind) {
  return kind == PolicyKind::kDuet ? "duet" : "arc";
}

bool ParsePolicyKind(std::string_view text, PolicyKind* out) {
  if (text == "arc") {
    *out = PolicyKind::kArc;
  } else if (text == "duet") {
    *out = PolicyKind::kDuet;
  } else {
    return false;
  }
  return true;
}

Status ArcOptions::Validate() const {
  auto bad = [](const char* field, const std::string& why) {
    return Status::InvalidArgument(std::string("arc options: ") + field + " " + why);
  };
  if (c_max_bytes == 0 && (c_max_percent == 0 || c_max_percent > 100)) {
    return bad("c_max_percent", "must be in [1, 100]");
  }
  if (c_min_bytes != 0 && c_max_bytes != 0 && c_min_bytes > c_max_bytes) {
    return bad("c_min_bytes", "exceeds c_max_bytes");
  }
  if (shrink_shift == 0 || shrink_shift > 20) return bad("shrink_shift", "must be in [1, 20]");
  if (free_shift > 20) return bad("free_shift", "must be <= 20");
  if (overflow_shift == 0 || overflow_shift > 20) return bad("overflow_shift", "must be in [1, 20]");
  if (eviction_pct == 0 || eviction_pct > 10000) return bad("eviction_pct", "must be in [1, 10000]");
  if (evict_batch == 0) return bad("evict_batch", "must be > 0");
  if (stuck_wait_ns > 10'000'000'000) return bad("stuck_wait_ns", "must be <= 10 s");
  if (p_min_shift > 16) return bad("p_min_shift", "must be <= 16");
  if (list_sublists == 0 || list_sublists > 256) return bad("list_sublists", "must be in [1, 256]");
  if (hash_shards == 0 || hash_shards > 65536 || !IsPowerOfTwo(hash_shards)) {
    return bad("hash_shards", "must be a power of two in [1, 65536]");
  }
  if (history_length == 0) return bad("history_length", "must be > 0");
  DuetOptions d = duet;
  d.cache_pages = 2;  // the engine sizes the shadows from c
  if (Status st = d.Validate(); !st.ok()) return bad("duet", st.message());
  return buffers.Validate();
}

}  // namespace arcstore::arc
