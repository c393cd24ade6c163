// The names of arcstore's own stats that the doctor reads, beyond the
// arcstats names the ARC shares with OpenZFS (c, size, hits, ...). The engine
// exports them in its registry (module "arcstats" unless prefixed), and the
// doctor's arcstore findings need nothing else. One place, so the engine and
// the doctor agree.
//
// Thread-safety: constants only.
#pragma once

#include <array>
#include <string_view>

namespace arcstore::doctor::names {

// Held bytes per holder kind: "held_bytes_" + kind.
inline constexpr std::string_view kHeldBytesPrefix = "held_bytes_";
inline constexpr std::array<std::string_view, 6> kHolderKinds = {
    "handle_cache", "dirty_record", "read_in_flight", "sync_write", "nbd_request", "api_user"};

// Txgs synced, by reason: "txg_syncs_" + reason.
inline constexpr std::string_view kTxgSyncsPrefix = "txg_syncs_";
inline constexpr std::array<std::string_view, 5> kSyncReasons = {
    "timeout", "dirty_threshold", "arc_dirty_limit", "explicit_wait", "memory"};

// Partial-record writes that needed the old record, and those that missed
// the ARC and read it from disk.
inline constexpr std::string_view kRmwReads = "rmw_reads";
inline constexpr std::string_view kRmwMisses = "rmw_misses";

// Eviction passes that freed nothing, and the waiters they released.
inline constexpr std::string_view kEvictNoProgress = "evict_no_progress";
inline constexpr std::string_view kWaitersReleasedNoProgress = "evict_waiters_released_no_progress";

// Disk writes issued by txg syncs (after aggregation) and their bytes.
inline constexpr std::string_view kDiskWrites = "disk_writes";
inline constexpr std::string_view kDiskWriteBytes = "disk_write_bytes";

}  // namespace arcstore::doctor::names
