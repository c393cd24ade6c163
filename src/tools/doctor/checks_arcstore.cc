// Checks that only arcstore's own stats can feed (arcstore_stat_names.h).
// In an OpenZFS dump their stats are absent, and they stay silent: that is
// not a gap in the dump.
#include <algorithm>
#include <cstdio>

#include "base/units.h"
#include "tools/doctor/arcstore_stat_names.h"
#include "tools/doctor/checks.h"

namespace arcstore::doctor::internal {
namespace {

constexpr int64_t kSmallWriteBytes = 64 * static_cast<int64_t>(kKiB);

std::string Pct(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f%%", pct);
  return buf;
}

std::string Name(std::string_view prefix, std::string_view suffix) {
  return std::string(prefix) + std::string(suffix);
}

// Syncs started by the dirty threshold while writers were delayed or
// blocked: dirty_max paces the writers. A warning when dirty_max is small
// for the memory (the engine's default is min(memory / 4, 4 GiB)), info
// when it is not (the device is slower than the writers: the throttle's job).
void CheckThresholdSyncs(CheckContext& ctx, int64_t total) {
  const std::string by_threshold_name = Name(names::kTxgSyncsPrefix, "dirty_threshold");
  int64_t by_threshold = ctx.Opt(by_threshold_name).value_or(0);
  double pct = 100.0 * static_cast<double>(by_threshold) / static_cast<double>(total);
  int64_t delayed = ctx.Opt(names::kDelayedWrites).value_or(0);
  int64_t blocked = ctx.Opt(names::kBlockedWrites).value_or(0);
  if (pct <= 50 || delayed + blocked < static_cast<int64_t>(ctx.opt.min_throttled_writes)) return;
  Finding f{"throttle_driven_syncs", Severity::kInfo, "", {}, ""};
  f.title = Pct(pct) + " of txg syncs were started by the dirty threshold while the write " +
            "throttle delayed " + std::to_string(delayed) + " writes and blocked " +
            std::to_string(blocked) + " at dirty_max";
  f.evidence = {ctx.Count(by_threshold_name)};
  for (auto n : {names::kDelayedWrites, names::kDelayNs, names::kBlockedWrites, names::kBlockedNs})
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Count(n));
  auto dirty_max = ctx.Opt(names::kDirtyMax);
  MemoryState mem = ReadMemory(ctx);
  if (dirty_max) f.evidence.push_back(ctx.Bytes(names::kDirtyMax));
  if (ctx.view.Has("c")) f.evidence.push_back(ctx.Bytes("c"));
  if (!dirty_max || !mem.all || *mem.all <= 0) {
    std::vector<std::string> missing;
    if (!dirty_max) missing.emplace_back(names::kDirtyMax);
    if (!mem.all || *mem.all <= 0) missing.emplace_back("memory_all_bytes");
    ctx.Undecide("throttle_driven_syncs", missing, "whether dirty_max is small for the memory");
  } else {
    const int64_t by_default = std::min<int64_t>(*mem.all / 4, 4 * static_cast<int64_t>(kGiB));
    f.evidence.push_back(ctx.Bytes("memory_all_bytes"));
    f.evidence.push_back(CheckContext::BytesOf("default dirty_max", by_default));
    if (static_cast<double>(*dirty_max) * ctx.opt.dirty_max_small_ratio <
        static_cast<double>(by_default)) {
      f.severity = Severity::kWarning;
      f.title += ": dirty_max (" + FormatSignedBytes(*dirty_max) + ") is small for " +
                 FormatSignedBytes(*mem.all) + " of memory";
      f.advice = "Each txg is synced once its new dirty bytes pass the sync kick (30% of "
                 "dirty_max unless serve --sync-kick says otherwise), and writers are delayed "
                 "from 60% of dirty_max, so a small dirty_max means frequent small syncs and "
                 "waiting writers. Raise dirty_max (PoolOptions.dirty_max_bytes; default "
                 "min(25% of memory, 4 GiB)); the effective limit is min(dirty_max, c / 2).";
      ctx.Add(std::move(f));
      return;
    }
  }
  f.title += ": the writers outpace the device";
  f.advice = "The throttle is doing its job: it slows writers to the pace at which txgs reach "
             "the disk. A faster device, or fewer writes, remove the delays.";
  ctx.Add(std::move(f));
}

}  // namespace

void CheckSyncReasons(CheckContext& ctx) {
  int64_t total = 0;
  bool any = false;
  for (auto r : names::kSyncReasons) {
    auto v = ctx.Opt(Name(names::kTxgSyncsPrefix, r));
    if (v) total += *v, any = true;
  }
  if (!any || total < static_cast<int64_t>(ctx.opt.min_txg_syncs)) return;
  int64_t forced = ctx.Opt(Name(names::kTxgSyncsPrefix, "arc_dirty_limit")).value_or(0) +
                   ctx.Opt(Name(names::kTxgSyncsPrefix, "memory")).value_or(0);
  double pct = 100.0 * static_cast<double>(forced) / static_cast<double>(total);
  if (pct <= 50) {
    CheckThresholdSyncs(ctx, total);
    return;
  }
  Finding f{"throttle_driven_syncs", Severity::kWarning, "", {}, ""};
  f.title = Pct(pct) + " of txg syncs were forced by the ARC's dirty limit or by memory, not "
                       "by the timeout or the dirty threshold";
  for (auto r : names::kSyncReasons)
    if (ctx.view.Has(Name(names::kTxgSyncsPrefix, r)))
      f.evidence.push_back(ctx.Count(Name(names::kTxgSyncsPrefix, r)));
  for (auto n : {"c", "c_min", "c_max"})
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Bytes(n));
  f.advice = "Dirty data may take at most half of c. When c is small (see target_collapsed), "
             "every few hundred MiB of writes forces a sync and writes wait for it: find why c "
             "is small before touching dirty_max.";
  ctx.Add(std::move(f));
}

void CheckRmw(CheckContext& ctx) {
  auto committed = ctx.Opt(names::kRmwReads);
  if (!committed || *committed < static_cast<int64_t>(ctx.opt.min_rmw_writes)) return;
  int64_t partial = *committed + ctx.Opt(names::kRmwDirty).value_or(0);
  double pct = 100.0 * static_cast<double>(*committed) / static_cast<double>(partial);
  if (pct <= 50) return;
  Finding f{"rmw_misses", Severity::kWarning, "", {}, ""};
  f.title = "read-modify-write: " + Pct(pct) +
            " of partial-record writes had to start from the committed record (read from the "
            "ARC, or from disk on a miss) and rewrite all of it";
  f.evidence = {ctx.Count(names::kRmwReads)};
  for (auto n : {names::kRmwDirty, names::kRecordReads})
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Count(n));
  f.advice = "Writes smaller than the record size read the rest of the record first. Match the "
             "volume's record size to the write size (e.g. 4K-16K records for 4K random "
             "writes), or give the ARC room to keep records cached.";
  ctx.Add(std::move(f));
}

namespace {

std::string WaitNsName(std::string_view place) {
  return Name(names::kWriterWaitPrefix, place) + std::string(names::kNsSuffix);
}

// What a writer's wait at `place` means, and what removes it. `growing`:
// the ARC is well below its target, so a buffer wait is new memory being
// mapped, not eviction.
const char* WriterWaitAdvice(std::string_view place, bool growing) {
  if (place == "throttle") {
    return "The write throttle is the one place writers are meant to wait: it slows them to "
           "the pace at which txgs reach the device (see throttle_driven_syncs).";
  }
  if (place == "space") {
    return "Writers waited for txg syncs to free pool space: the pool is nearly full. Free "
           "space (trim, destroy volumes) or grow the pool.";
  }
  if (place == "buffer" && growing) {
    return "Writers waited for new buffers while the ARC grew (its size well below c): memory "
           "new to the process is costly at its first touch on some machines (virtual "
           "machines above all). `arcstore serve --arc-pretouch SIZE` writes that memory once "
           "ahead of the writers.";
  }
  if (place == "buffer") {
    return "Writers waited for the ARC to evict before they had a buffer: the ARC is at its "
           "target with little evictable. Look at nothing_evictable and the holders, or give "
           "the ARC more memory (--arc-max).";
  }
  if (place == "lock") {
    return "Writers waited for a volume's lock held by other writers, readers or the sync: "
           "many threads on one volume. Spread the load over volumes, or larger writes.";
  }
  return "Partial-record writes waited to read the committed record. Match the record size "
         "to the write size (see rmw_misses), or let the ARC keep the records.";
}

}  // namespace

// The place where writers spent most of their waiting time, when one place
// has most of it and that is long enough to matter (a buffer's first touch
// or a short lock wait adds up to milliseconds in a healthy run): a warning
// unless it is the throttle.
void CheckWriterWaits(CheckContext& ctx) {
  int64_t waits = 0, total_ns = 0, top_ns = 0;
  std::string_view top;
  for (auto place : names::kWriterWaitPlaces) {
    waits += ctx.Opt(Name(names::kWriterWaitsPrefix, place)).value_or(0);
    const int64_t ns = ctx.Opt(WaitNsName(place)).value_or(0);
    total_ns += ns;
    if (ns > top_ns) top_ns = ns, top = place;
  }
  if (waits < static_cast<int64_t>(ctx.opt.min_writer_waits) || total_ns <= 0) return;
  const double pct = 100.0 * static_cast<double>(top_ns) / static_cast<double>(total_ns);
  if (pct <= 50 || top_ns < static_cast<int64_t>(ctx.opt.min_writer_wait_ns)) return;
  const bool throttle = top == "throttle";
  Finding f{"writer_waits_" + std::string(top), throttle ? Severity::kInfo : Severity::kWarning,
            "", {}, ""};
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%.3f s", static_cast<double>(top_ns) / 1e9);
  f.title = "writers spent " + Pct(pct) + " of their waiting time (" + secs + ") waiting for " +
            (top == "rmw_read" ? std::string("read-modify-write reads") : std::string(top));
  for (auto place : names::kWriterWaitPlaces) {
    for (const std::string& n : {Name(names::kWriterWaitsPrefix, place), WaitNsName(place)}) {
      if (ctx.view.Has(n)) f.evidence.push_back(ctx.Count(n));
    }
  }
  const auto size = ctx.Opt("size"), c = ctx.Opt("c");
  const bool growing = size && c && *c > 0 && *size < *c / 10 * 9;
  if (top == "buffer") {
    for (const char* n : {"size", "c"}) {
      if (ctx.view.Has(n)) f.evidence.push_back(ctx.Bytes(n));
    }
  }
  f.advice = WriterWaitAdvice(top, growing);
  ctx.Add(std::move(f));
}

// The host stopped the server (arcstore serve's stall watch): a share of
// the time watched long enough that requests' tails of tens of
// milliseconds are the machine's, whatever the engine's own figures say.
void CheckMachineStalls(CheckContext& ctx) {
  const auto stalls = ctx.Opt(names::kMachineStalls);
  const auto stall_ns = ctx.Opt(names::kMachineStallNs);
  const auto watched_ns = ctx.Opt(names::kMachineWatchedNs);
  if (!stalls || !stall_ns || !watched_ns || *watched_ns <= 0) return;
  if (*stalls < static_cast<int64_t>(ctx.opt.min_machine_stalls)) return;
  const double pct = 100.0 * static_cast<double>(*stall_ns) / static_cast<double>(*watched_ns);
  if (pct < ctx.opt.machine_stall_pct) return;
  Finding f{"machine_stalls", Severity::kWarning, "", {}, ""};
  f.title = "the host stopped the server " + std::to_string(*stalls) +
            " times for 10 ms or more, " + Pct(pct) + " of the time watched";
  f.evidence = {ctx.Count(names::kMachineStalls), ctx.Count(names::kMachineStallNs),
                ctx.Count(names::kMachineWatchedNs)};
  if (ctx.view.Has(names::kMachineWorstStallNs)) {
    f.evidence.push_back(ctx.Count(names::kMachineWorstStallNs));
  }
  f.advice = "No CPU ran the process then: the virtual machine's CPU quota (a VM whose CPUs "
             "and I/O pass it is stopped for the rest of each period) or steal. Every request "
             "in flight waits as long, so tail latencies of that size are the machine's, not "
             "the engine's. Give the VM more CPU or a higher quota, or put less CPU and I/O on "
             "it at once.";
  ctx.Add(std::move(f));
}

void CheckNoProgress(CheckContext& ctx) {
  auto passes = ctx.Opt(names::kEvictNoProgress);
  if (!passes || *passes <= 0) return;
  Finding f{"eviction_no_progress", Severity::kWarning, "", {}, ""};
  f.title = std::to_string(*passes) +
            " eviction passes freed nothing while size was above c, releasing their waiters";
  f.evidence = {ctx.Count(names::kEvictNoProgress)};
  if (ctx.view.Has(names::kWaitersReleasedPassEnd))
    f.evidence.push_back(ctx.Count(names::kWaitersReleasedPassEnd));
  std::string holder = DominantHolder(ctx, &f.evidence);
  if (!holder.empty()) f.title += ": " + holder;
  f.advice = "The cache is pinned: everything evictable is gone and holds keep the rest, so the "
             "ARC overshoots c rather than deadlock. Reduce what the holder keeps (for the "
             "handle cache, it follows c/32; for NBD requests, the in-flight limit).";
  ctx.Add(std::move(f));
}

void CheckSmallWrites(CheckContext& ctx) {
  auto writes = ctx.Opt(names::kDiskWrites), bytes = ctx.Opt(names::kDiskWriteBytes);
  if (!writes || !bytes || *writes < static_cast<int64_t>(ctx.opt.min_disk_writes)) return;
  int64_t avg = *bytes / *writes;
  if (avg >= kSmallWriteBytes) return;
  Finding f{"small_disk_writes", Severity::kWarning, "", {}, ""};
  f.title = "disk writes average " + FormatSignedBytes(avg) +
            ": txg syncs are not aggregating into large I/Os";
  f.evidence = {ctx.Count(names::kDiskWrites), ctx.Bytes(names::kDiskWriteBytes),
                CheckContext::BytesOf("average write", avg)};
  f.advice = "Small disk writes come from small records or from syncs forced so often that "
             "little is dirty each time (see throttle_driven_syncs). Larger records and fewer, "
             "larger syncs let the I/O layer merge writes up to its aggregation limit.";
  ctx.Add(std::move(f));
}

}  // namespace arcstore::doctor::internal
