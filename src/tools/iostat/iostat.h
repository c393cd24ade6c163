// arcstore iostat: the pool's device I/O as `zpool iostat` shows it, with
// its -l (latency), -w (latency histograms), -r (request size histograms,
// individual vs aggregated) and -q (queue) views, plus Lustre brw_stats-style
// tables: I/Os in flight (with -q) and I/O time (with -w).
//
// It reads the I/O engine's stats, module "io", per class
// (sync_read sync_write async_read async_write log_write):
//   io.<class>_ops, io.<class>_bytes                 counters
//   io.<class>_queue_ns, io.<class>_latency_ns       log2 histograms (queue wait, device time)
//   io.<class>_size_ind_bytes, io.<class>_size_agg_bytes  log2 histograms
//   io.<class>_active, io.<class>_queued             gauges
//   io.inflight_depth (histogram), io.flushes, io.flush_latency_ns
// and pool.allocated_bytes / pool.free_bytes for capacity. Cache devices
// (IostatOptions::cache_devices) get rows of their own under a "cache"
// line, as zpool iostat -v shows them, from their module (l2arc.N):
//   device_reads, device_read_bytes, device_read_latency_ns,
//   device_writes, device_write_bytes, device_write_latency_ns  (io/measured_device.h)
//   asize (alloc; free is the device's size less it)
// A cache device has no queue of its own: its wait columns are device
// time, its queue columns "-". Rates and
// histograms cover the interval (a Delta of two snapshots); gauges are the
// later snapshot's. A value whose stat is missing prints "-".
//
//   read  = sync_read + async_read       write = sync_write + async_write + log_write
//   total_wait = queue + device time; disk_wait = device time;
//   syncq_wait = sync-class queue time; asyncq_wait = async-class queue time
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "stats/registry.h"

namespace arcstore::tools {

inline constexpr std::array<std::string_view, 5> kIoClasses = {
    "sync_read", "sync_write", "async_read", "async_write", "log_write"};

// One cache device's row: its name (a path's last part is enough), its
// stats module and its size.
struct IostatCacheDevice {
  std::string name;
  std::string stats_module;
  uint64_t size_bytes = 0;
};

struct IostatOptions {
  std::string pool_name = "pool";
  std::vector<IostatCacheDevice> cache_devices;
  bool latency = false;     // -l
  bool histograms = false;  // -w
  bool sizes = false;       // -r
  bool queues = false;      // -q
  bool header = true;       // print the column header before the row
};

struct IostatInterval {
  const stats::Snapshot* delta = nullptr;
  const stats::Snapshot* now = nullptr;
  double seconds = 1;
};

std::string RenderIostat(const IostatInterval& interval, const IostatOptions& options);

// zpool iostat's time format: "0", "850ns", "12us", "1.5ms", "2s"; "-" for none.
std::string NiceTimeNs(double ns);

}  // namespace arcstore::tools
