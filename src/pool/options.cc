// The public API's option checks and Pool::Open (Pool::Create: pool_create.cc).
#include <sys/stat.h>

#include <cerrno>

#include "arcstore/pool.h"
#include "base/units.h"
#include "format/compression.h"
#include "format/volume_table.h"
#include "io/file_device.h"
#include "io/slow_device.h"
#include "io/uring_device.h"
#include "pool/pool_impl.h"

namespace arcstore {

Status PoolCreateOptions::Validate() const {
  if (size_bytes != 0 && (size_bytes < 16 * kMiB || size_bytes % 4096 != 0)) {
    return Status::InvalidArgument("pool size " + std::to_string(size_bytes) +
                                   " must be at least 16 MiB and a multiple of 4 KiB");
  }
  if (name.empty() || name.size() > 64) {
    return Status::InvalidArgument("pool name '" + name + "' must be 1 to 64 characters");
  }
  return Status::Ok();
}

Status PoolOptions::Validate() const {
  if (io.backend != "auto" && io.backend != "io_uring" && io.backend != "psync") {
    return Status::InvalidArgument("io.backend '" + io.backend +
                                   "' is not one of auto, io_uring, psync");
  }
  if (memory_limit_bytes != 0 && memory_limit_bytes < 64 * kMiB) {
    return Status::InvalidArgument("memory_limit_bytes " + std::to_string(memory_limit_bytes) +
                                   " is below 64 MiB");
  }
  if (arc_max_bytes != 0 && arc_max_bytes < 16 * kMiB) {
    return Status::InvalidArgument("arc_max_bytes " + std::to_string(arc_max_bytes) +
                                   " is below 16 MiB");
  }
  if (arc_min_bytes != 0 && arc_max_bytes != 0 && arc_min_bytes > arc_max_bytes) {
    return Status::InvalidArgument("arc_min_bytes exceeds arc_max_bytes");
  }
  if (arc_policy != "arc" && arc_policy != "duet") {
    return Status::InvalidArgument("arc_policy '" + arc_policy + "' is not one of arc, duet");
  }
  if (arc_pretouch_bytes > 64 * kGiB) {
    return Status::InvalidArgument("arc_pretouch_bytes " + std::to_string(arc_pretouch_bytes) +
                                   " exceeds 64 GiB");
  }
  if (arc_grow_ahead_bytes > kGiB) {
    return Status::InvalidArgument("arc_grow_ahead_bytes " + std::to_string(arc_grow_ahead_bytes) +
                                   " exceeds 1 GiB");
  }
  if (dirty_max_bytes != 0 && dirty_max_bytes < kMiB) {
    return Status::InvalidArgument("dirty_max_bytes " + std::to_string(dirty_max_bytes) +
                                   " is below 1 MiB");
  }
  if (work_threads > 256) {
    return Status::InvalidArgument("work_threads " + std::to_string(work_threads) +
                                   " exceeds the limit of 256");
  }
  if (work_queue_limit < 1 || work_queue_limit > 1'000'000) {
    return Status::InvalidArgument("work_queue_limit must be in [1, 1000000]");
  }
  if (space_slop_shift < 5 || space_slop_shift > 12) {
    return Status::InvalidArgument("space_slop_shift " + std::to_string(space_slop_shift) +
                                   " out of bounds [5, 12] (slop of 1/32 .. 1/4096 of the pool)");
  }
  if (space_sync_kick_percent > 100) {
    return Status::InvalidArgument("space_sync_kick_percent " +
                                   std::to_string(space_sync_kick_percent) +
                                   " out of bounds [0, 100]");
  }
  if (intent_log_sync_kick_percent > 50) {
    return Status::InvalidArgument("intent_log_sync_kick_percent " +
                                   std::to_string(intent_log_sync_kick_percent) +
                                   " out of bounds [0, 50]");
  }
  if (intent_log_spill_percent > 100) {
    return Status::InvalidArgument("intent_log_spill_percent " +
                                   std::to_string(intent_log_spill_percent) +
                                   " out of bounds [0, 100]");
  }
  if (intent_log_early_write_window_ns > kNsPerSec) {
    return Status::InvalidArgument("intent_log_early_write_window_ns " +
                                   std::to_string(intent_log_early_write_window_ns) +
                                   " out of bounds [0, 1 s]");
  }
  if (txg_sync_kick_percent < 1 || txg_sync_kick_percent > 100) {
    return Status::InvalidArgument("txg_sync_kick_percent " +
                                   std::to_string(txg_sync_kick_percent) +
                                   " out of bounds [1, 100]");
  }
  if (txg_sync_nice < 0 || txg_sync_nice > 19) {
    return Status::InvalidArgument("txg_sync_nice " + std::to_string(txg_sync_nice) +
                                   " out of bounds [0, 19]");
  }
  if (intent_log_bytes != 0 && (intent_log_bytes < kMiB || intent_log_bytes > 4 * kGiB)) {
    return Status::InvalidArgument("intent_log_bytes " + std::to_string(intent_log_bytes) +
                                   " out of bounds [1 MiB, 4 GiB]");
  }
  if (txg_timeout_ns < kNsPerMs || txg_timeout_ns > 600 * kNsPerSec) {
    return Status::InvalidArgument("txg_timeout_ns must be in [1 ms, 600 s]");
  }
  if (cache.write_max_bytes < kMiB || cache.write_max_bytes > kGiB) {
    return Status::InvalidArgument("cache.write_max_bytes " +
                                   std::to_string(cache.write_max_bytes) +
                                   " out of bounds [1 MiB, 1 GiB]");
  }
  if (cache.write_boost_bytes > kGiB) {
    return Status::InvalidArgument("cache.write_boost_bytes " +
                                   std::to_string(cache.write_boost_bytes) +
                                   " out of bounds [0, 1 GiB]");
  }
  if (cache.feed_interval_ms < 10 || cache.feed_interval_ms > 60000) {
    return Status::InvalidArgument("cache.feed_interval_ms " +
                                   std::to_string(cache.feed_interval_ms) +
                                   " out of bounds [10, 60000]");
  }
  if (io.read_latency_ns > io::SlowDevice::kMaxLatencyNs) {
    return Status::InvalidArgument("io.read_latency_ns " + std::to_string(io.read_latency_ns) +
                                   " out of bounds [0, 10 s]");
  }
  return pool::QueueOptionsFrom(io).Validate().WithContext("PoolOptions.io");
}

Status VolumeOptions::Validate() const {
  const std::string who = "volume '" + name + "': ";
  if (name.empty() || name.size() > format::kMaxVolumeNameBytes) {
    return Status::InvalidArgument(who + "name must be 1 to " +
                                   std::to_string(format::kMaxVolumeNameBytes) + " characters");
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' ||
          c == '-')) {
      return Status::InvalidArgument(who + "name may hold only letters, digits and _.:-");
    }
  }
  if (size_bytes == 0 || size_bytes % 512 != 0 || size_bytes > format::kMaxVolumeSizeBytes) {
    return Status::InvalidArgument(who + "size " + std::to_string(size_bytes) +
                                   " must be a non-zero multiple of 512 up to 1 EiB");
  }
  if (!IsPowerOfTwo(record_size_bytes) || record_size_bytes < format::kMinRecordSize ||
      record_size_bytes > format::kMaxRecordSize) {
    return Status::InvalidArgument(who + "record size " + std::to_string(record_size_bytes) +
                                   " must be a power of two from 4 KiB to 1 MiB");
  }
  Result<format::Compression> c = format::ParseCompression(compression);
  if (!c.ok()) return c.status().WithContext(who + "compression");
  return Status::Ok();
}

Result<std::unique_ptr<Pool>> Pool::Open(const std::string& path, const PoolOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    return Status::NotFound("no pool at " + path + " (no such file or device)");
  }
  ARC_ASSIGN_OR_RETURN(io::FileLock lock,
                       io::FileLock::Acquire(path, /*exclusive=*/!options.read_only));
  // io_uring when it works here, else psync; O_DIRECT when the file allows.
  io::UringDeviceOptions uo;
  uo.file.read_only = options.read_only;
  std::unique_ptr<io::Device> dev;
  if (options.io.backend == "psync") {
    ARC_ASSIGN_OR_RETURN(dev, io::FileDevice::Open(path, uo.file));
  } else if (options.io.backend == "io_uring") {
    ARC_ASSIGN_OR_RETURN(dev, io::UringDevice::Open(path, uo));
  } else {
    ARC_ASSIGN_OR_RETURN(dev, io::OpenBestDevice(path, uo));
  }
  if (options.io.read_latency_ns > 0) {
    ARC_ASSIGN_OR_RETURN(dev, io::SlowDevice::Create(std::move(dev), options.io.read_latency_ns,
                                                     DefaultClock()));
  }
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<pool::PoolImpl> p,
                       pool::PoolImpl::OpenOnDevice(std::move(dev), options));
  p->HoldLock(std::move(lock));
  return std::unique_ptr<Pool>(std::move(p));
}

}  // namespace arcstore
