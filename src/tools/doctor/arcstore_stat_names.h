// The names of arcstore's own stats that the doctor reads, beyond the
// arcstats names the ARC shares with OpenZFS (c, size, hits, ...), as
// FromSnapshot names them: module "arcstats" plain, other modules prefixed
// ("txg.syncs_timeout"). They mirror what src/arc, src/txg, src/volume and
// src/pool declare; one place, so a rename shows up here.
//
// Thread-safety: constants only.
#pragma once

#include <array>
#include <string_view>

namespace arcstore::doctor::names {

// Held bytes per holder kind (module arcstats): "held_bytes_" + kind.
inline constexpr std::string_view kHeldBytesPrefix = "held_bytes_";
inline constexpr std::array<std::string_view, 6> kHolderKinds = {
    "handle_cache", "dirty_record", "read_in_flight", "sync_write", "nbd_request", "api_user"};

// Changes of c by cause (module arcstats): "c_changes_" / "c_change_bytes_" + cause.
inline constexpr std::string_view kCChangesPrefix = "c_changes_";
inline constexpr std::string_view kCChangeBytesPrefix = "c_change_bytes_";
inline constexpr std::array<std::string_view, 5> kCCauses = {"grow", "pressure", "limit", "set",
                                                             "shrink_stopped"};

// Txgs synced, by reason (module txg): "txg.syncs_" + reason.
inline constexpr std::string_view kTxgSyncsPrefix = "txg.syncs_";
inline constexpr std::array<std::string_view, 8> kSyncReasons = {
    "timeout", "dirty_threshold", "arc_dirty_limit", "explicit_wait", "shutdown", "memory",
    "log_space", "space"};

// Partial-record writes (module volumes): those that needed the committed
// record (from the ARC, or from disk on a miss), and those served by a dirty
// copy; and every committed record read from disk (reads and RMW alike).
inline constexpr std::string_view kRmwReads = "volumes.rmw_reads";
inline constexpr std::string_view kRmwDirty = "volumes.rmw_dirty";
inline constexpr std::string_view kRecordReads = "volumes.record_reads";

// A writer's waits by place (module volumes; volume_impl.h, WriterWait):
// "volumes.writer_waits_" + place, and "volumes.writer_wait_" + place + "_ns".
inline constexpr std::string_view kWriterWaitsPrefix = "volumes.writer_waits_";
inline constexpr std::string_view kWriterWaitPrefix = "volumes.writer_wait_";
inline constexpr std::string_view kNsSuffix = "_ns";
inline constexpr std::array<std::string_view, 5> kWriterWaitPlaces = {"space", "buffer", "throttle",
                                                                      "lock", "rmw_read"};

// The machine's stalls (module machine; stats/machine_stalls.h): times no
// CPU ran `arcstore serve` for 10 ms or more, their length summed, the time
// watched and the longest.
inline constexpr std::string_view kMachineStalls = "machine.stalls";
inline constexpr std::string_view kMachineStallNs = "machine.stall_ns";
inline constexpr std::string_view kMachineWatchedNs = "machine.watched_ns";
inline constexpr std::string_view kMachineWorstStallNs = "machine.worst_stall_ns";

// The write throttle (module txg): dirty_max, and the writes it delayed or
// blocked at dirty_max with the time they spent.
inline constexpr std::string_view kDirtyMax = "txg.dirty_max_bytes";
inline constexpr std::string_view kDelayedWrites = "txg.delayed_writes";
inline constexpr std::string_view kDelayNs = "txg.delay_ns";
inline constexpr std::string_view kBlockedWrites = "txg.blocked_writes";
inline constexpr std::string_view kBlockedNs = "txg.blocked_ns";

// Eviction passes that freed nothing with size above c (each releases its
// waiters), and waiters released at the end of a pass (module arcstats).
inline constexpr std::string_view kEvictNoProgress = "evict_passes_no_progress";
inline constexpr std::string_view kWaitersReleasedPassEnd = "waiters_released_pass_end";

// Device writes after aggregation and their bytes (module io).
inline constexpr std::string_view kDiskWrites = "io.writes";
inline constexpr std::string_view kDiskWriteBytes = "io.write_bytes";

}  // namespace arcstore::doctor::names
