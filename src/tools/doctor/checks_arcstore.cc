// Checks that only arcstore's own stats can feed (arcstore_stat_names.h).
// In an OpenZFS dump their stats are absent, and they stay silent: that is
// not a gap in the dump.
#include <cstdio>

#include "base/units.h"
#include "tools/doctor/arcstore_stat_names.h"
#include "tools/doctor/checks.h"

namespace arcstore::doctor::internal {
namespace {

constexpr int64_t kMinSyncs = 10;
constexpr int64_t kMinRmw = 1000;
constexpr int64_t kMinWrites = 1000;
constexpr int64_t kSmallWriteBytes = 64 * static_cast<int64_t>(kKiB);

std::string Pct(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f%%", pct);
  return buf;
}

std::string Name(std::string_view prefix, std::string_view suffix) {
  return std::string(prefix) + std::string(suffix);
}

}  // namespace

void CheckSyncReasons(CheckContext& ctx) {
  int64_t total = 0;
  bool any = false;
  for (auto r : names::kSyncReasons) {
    auto v = ctx.Opt(Name(names::kTxgSyncsPrefix, r));
    if (v) total += *v, any = true;
  }
  if (!any || total < kMinSyncs) return;
  int64_t forced = ctx.Opt(Name(names::kTxgSyncsPrefix, "arc_dirty_limit")).value_or(0) +
                   ctx.Opt(Name(names::kTxgSyncsPrefix, "memory")).value_or(0);
  double pct = 100.0 * static_cast<double>(forced) / static_cast<double>(total);
  if (pct <= 50) return;
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
  auto disk = ctx.Opt(names::kRmwReads);
  if (!disk || *disk < kMinRmw) return;
  int64_t partial = *disk + ctx.Opt(names::kRmwDirty).value_or(0);
  double pct = 100.0 * static_cast<double>(*disk) / static_cast<double>(partial);
  if (pct <= 50) return;
  Finding f{"rmw_misses", Severity::kWarning, "", {}, ""};
  f.title = "read-modify-write misses: " + Pct(pct) +
            " of partial-record writes had to read the old record from disk";
  f.evidence = {ctx.Count(names::kRmwReads)};
  if (ctx.view.Has(names::kRmwDirty)) f.evidence.push_back(ctx.Count(names::kRmwDirty));
  f.advice = "Writes smaller than the record size read the rest of the record first. Match the "
             "volume's record size to the write size (e.g. 4K-16K records for 4K random "
             "writes), or give the ARC room to keep records cached.";
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
  if (!writes || !bytes || *writes < kMinWrites) return;
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
