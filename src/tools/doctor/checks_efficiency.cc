// Checks of how well the cache works (hit ratios, ghosts, prefetch), of the
// OpenZFS-only limits (metadata, dnodes, arc_prune, L2ARC), and cold caches.
#include <algorithm>
#include <cstdio>

#include "base/units.h"
#include "tools/doctor/checks.h"

namespace arcstore::doctor::internal {
namespace {

constexpr double kMaxGhostScale = 8;

double Pct(int64_t a, int64_t b) { return b > 0 ? 100.0 * static_cast<double>(a) / b : 0.0; }

bool IsArcstore(const CheckContext& ctx) { return ctx.view.field_set == FieldSet::kArcstore; }

std::string Fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, a);
  return buf;
}

}  // namespace

void CheckCacheTooSmall(CheckContext& ctx) {
  auto v = ctx.Need("cache_too_small", {"hits", "misses", "mru_ghost_hits", "mfu_ghost_hits"},
                    "whether a larger cache would turn misses into hits");
  if (!v) return;
  int64_t hits = (*v)[0], misses = (*v)[1], ghost = (*v)[2] + (*v)[3];
  int64_t accesses = hits + misses;
  if (accesses < static_cast<int64_t>(ctx.opt.min_accesses)) return;  // cold: no verdict
  double hit_pct = Pct(hits, accesses), ghost_pct = Pct(ghost, accesses);
  // The ghost lists may remember far less than c (MRU + MRU-ghost <= c, so a
  // large MRU leaves a short MRU-ghost): few ghost hits then say little.
  // Scaled to ghost lists as large as c (at most kMaxGhostScale x), the
  // share estimates what a cache twice as large would have hit.
  double ghost_est_pct = ghost_pct;
  auto ghost_bytes = ctx.SumPresent({"mru_ghost_size", "mfu_ghost_size"}, nullptr);
  auto c_now = ctx.Opt("c");
  if (ghost_bytes && c_now && *ghost_bytes > 0 && *ghost_bytes < *c_now)
    ghost_est_pct = ghost_pct * std::min(kMaxGhostScale, static_cast<double>(*c_now) /
                                                             static_cast<double>(*ghost_bytes));
  bool ghosts_high = ghost_est_pct >= ctx.opt.ghost_hit_pct;
  bool hits_low = hit_pct < ctx.opt.low_hit_ratio_pct;
  if (!ghosts_high && !hits_low) return;
  auto c = ctx.Opt("c"), c_max = ctx.Opt("c_max");
  if (!c || !c_max) {
    std::vector<std::string> missing;
    if (!c) missing.emplace_back("c");
    if (!c_max) missing.emplace_back("c_max");
    ctx.Undecide("cache_too_small", missing, "whether the cache is already at its ceiling c_max");
    return;
  }
  bool at_max = static_cast<double>(*c) >= ctx.opt.near_max_pct / 100.0 * *c_max;
  Finding f{"cache_too_small", Severity::kWarning, "", {}, ""};
  f.evidence = {ctx.Count("hits"), ctx.Count("misses"),
                CheckContext::PercentOf("hit ratio", hit_pct),
                CheckContext::PercentOf("ghost hits / accesses", ghost_pct), ctx.Bytes("c"),
                ctx.Bytes("c_max")};
  for (auto n : {"mru_ghost_size", "mfu_ghost_size"})
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Bytes(n));
  if (ghost_est_pct != ghost_pct)
    f.evidence.push_back(
        CheckContext::PercentOf("ghost hits / accesses, scaled to ghost lists of c", ghost_est_pct));
  if (at_max && ghosts_high) {
    f.title = "cache too small: " + Fmt("%.1f%%", ghost_pct) +
              " of accesses hit a ghost list (recently evicted)" +
              (ghost_est_pct != ghost_pct
                   ? Fmt(", ~%.1f%% for ghost lists as large as c,", ghost_est_pct)
                   : std::string()) +
              " with c at c_max";
    f.advice = "Blocks are evicted shortly before they are needed again. More memory for the "
               "ARC (zfs_arc_max) or an L2ARC would turn these misses into hits.";
  } else if (at_max && ghost_bytes && *ghost_bytes * kMaxGhostScale < *c) {
    // MRU + MRU-ghost <= c: with MRU filling c (a scan, or records evicted
    // before a second hit can promote them) the ghosts remember nothing,
    // so their silence is no evidence against reuse.
    for (auto n : {"mru_size", "mfu_size"})
      if (ctx.view.Has(n)) f.evidence.push_back(ctx.Bytes(n));
    f.title = "low hit ratio (" + Fmt("%.1f%%", hit_pct) +
              ") with c at c_max, and the ghost lists are too short (" +
              FormatSignedBytes(*ghost_bytes) + ") to tell whether a larger cache would help";
    f.advice = "Either the workload does not reuse data (a scan) or its working set is larger "
               "than c_max. Try a larger ARC (zfs_arc_max, arcstore's arc_max) and compare the "
               "hit ratio, or replay a block trace with `arcstore sim` at several sizes.";
  } else if (at_max) {
    f.severity = Severity::kInfo;
    f.title = "low hit ratio (" + Fmt("%.1f%%", hit_pct) +
              ") at c_max, but few ghost hits: the workload does not reuse data, and a larger "
              "cache would not help";
  } else if (ghosts_high) {
    f.severity = Severity::kInfo;
    f.title = Fmt("%.1f%%", ghost_est_pct) +
              " of accesses hit a ghost list while c is below c_max: the ARC can still grow";
  } else {
    return;
  }
  ctx.Add(std::move(f));
}

void CheckPrefetch(CheckContext& ctx) {
  std::vector<std::string> missing_ios, missing_used;
  auto ios = ctx.SumPresent({"prefetch_data_misses", "prefetch_metadata_misses"}, &missing_ios);
  auto used = ctx.SumPresent({"demand_hit_predictive_prefetch", "demand_iohit_predictive_prefetch"},
                             &missing_used);
  auto predictive = ctx.Opt("predictive_prefetch");  // 2.2+: every predictive prefetch
  auto base = predictive ? predictive : ios;
  if (!base || !used) {
    std::vector<std::string> missing = !base ? missing_ios : std::vector<std::string>{};
    if (!used) missing.push_back("demand_hit_predictive_prefetch");
    ctx.Undecide("prefetch", missing, "whether prefetched blocks are ever used");
    return;
  }
  if (*base < static_cast<int64_t>(ctx.opt.min_prefetches)) return;
  double used_pct = Pct(*used, *base);
  if (used_pct >= ctx.opt.prefetch_used_low_pct) return;
  Finding f{"prefetch_wasted", Severity::kWarning, "", {}, ""};
  f.title = "prefetch is mostly wasted: only " + Fmt("%.1f%%", used_pct) +
            " of prefetched blocks were later read on demand";
  f.evidence = {CheckContext::PercentOf("used / prefetched", used_pct)};
  for (auto n : {"predictive_prefetch", "prefetch_data_misses", "prefetch_metadata_misses",
                 "prefetch_data_hits", "prefetch_metadata_hits", "demand_hit_predictive_prefetch",
                 "demand_iohit_predictive_prefetch"})
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Count(n));
  f.advice = "Prefetch reads data nobody asks for, costing disk bandwidth and cache space. For "
             "random workloads disable it (zfs_prefetch_disable=1, or arcstore's per-pool "
             "prefetch option).";
  ctx.Add(std::move(f));
}

void CheckMetadata(CheckContext& ctx) {
  if (ctx.view.field_set == FieldSet::k22Plus || IsArcstore(ctx)) return;  // no hard limit
  auto v = ctx.Need("metadata_limit", {"arc_meta_used", "arc_meta_limit"},
                    "whether metadata is over its limit (before OpenZFS 2.2)");
  if (!v || (*v)[1] <= 0 || (*v)[0] <= (*v)[1]) return;
  Finding f{"metadata_over_limit", Severity::kWarning, "", {}, ""};
  f.title = "metadata is over its limit: arc_meta_used is " + Fmt("%.0f%%", Pct((*v)[0], (*v)[1])) +
            " of arc_meta_limit";
  f.evidence = {ctx.Bytes("arc_meta_used"), ctx.Bytes("arc_meta_limit")};
  for (auto n : {"arc_meta_max", "arc_prune"})
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Count(n));
  f.advice = "Over the limit, the ARC evicts metadata first and asks the OS to drop cached "
             "dnodes and inodes (arc_prune), which costs CPU and metadata misses. Raise "
             "zfs_arc_meta_limit, or move to OpenZFS 2.2, which balances metadata instead.";
  ctx.Add(std::move(f));
}

void CheckDnodes(CheckContext& ctx) {
  if (IsArcstore(ctx)) return;
  auto v = ctx.Need("dnode_limit", {"dnode_size", "arc_dnode_limit"},
                    "whether the dnode cache is over its limit");
  if (!v || (*v)[1] <= 0 || (*v)[0] <= (*v)[1]) return;
  Finding f{"dnode_over_limit", Severity::kWarning, "", {}, ""};
  f.title = "the dnode cache is over its limit: dnode_size is " +
            Fmt("%.0f%%", Pct((*v)[0], (*v)[1])) + " of arc_dnode_limit";
  f.evidence = {ctx.Bytes("dnode_size"), ctx.Bytes("arc_dnode_limit")};
  f.advice = "Many files are open or cached (the OS pins their dnodes). Raise "
             "zfs_arc_dnode_limit_percent, or reduce the kernel's inode cache pressure.";
  ctx.Add(std::move(f));
}

void CheckArcPrune(CheckContext& ctx) {
  if (IsArcstore(ctx)) return;
  auto v = ctx.Need("arc_prune", {"arc_prune"}, "whether arc_prune calls come in storms");
  if (!v) return;
  auto crtime = ctx.Opt("crtime"), snaptime = ctx.Opt("snaptime");
  if (!crtime || !snaptime || *snaptime <= *crtime) {
    if ((*v)[0] > 0)
      ctx.Undecide("arc_prune", {"crtime", "snaptime"}, "the rate of arc_prune calls");
    return;
  }
  double uptime_sec = static_cast<double>(*snaptime - *crtime) / 1e9;
  double rate = uptime_sec >= 1 ? static_cast<double>((*v)[0]) / uptime_sec : 0;
  if (rate <= ctx.opt.prune_rate_per_sec) return;
  Finding f{"arc_prune_storm", Severity::kWarning, "", {}, ""};
  f.title = "arc_prune storm: " + Fmt("%.0f", rate) + " calls per second on average";
  f.evidence = {ctx.Count("arc_prune"), {"seconds since the kstat was created", Fmt("%.0f", uptime_sec)}};
  for (auto n : {"arc_meta_used", "arc_meta_limit", "dnode_size", "arc_dnode_limit"})
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Bytes(n));
  f.advice = "The ARC keeps asking the OS to release dnodes and inodes because metadata or "
             "dnodes are over their limits; each call walks kernel caches. Raise the metadata "
             "and dnode limits, or find what keeps so many files open.";
  ctx.Add(std::move(f));
}

void CheckL2arc(CheckContext& ctx) {
  auto l2_size = ctx.Opt("l2_size");
  if (!l2_size) {
    // An arcstore pool without cache devices has no l2 stats to miss.
    if (!IsArcstore(ctx)) ctx.Undecide("l2arc", {"l2_size"}, "L2ARC header overhead and sizes");
    return;
  }
  auto l2_asize = ctx.Opt("l2_asize"), l2_hdr = ctx.Opt("l2_hdr_size"), size = ctx.Opt("size");
  Finding f{"l2arc_sizes_impossible", Severity::kCritical, "", {}, ""};
  for (auto n : {"l2_size", "l2_asize", "l2_hdr_size", "size"})
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Bytes(n));
  bool negative = *l2_size < 0 || (l2_asize && *l2_asize < 0) || (l2_hdr && *l2_hdr < 0);
  if (negative || (*l2_size == 0 && l2_hdr && *l2_hdr > 0) ||
      (l2_asize && *l2_size > 0 && *l2_asize > 2 * *l2_size)) {
    f.severity = negative ? Severity::kCritical : Severity::kWarning;
    f.title = negative ? "L2ARC sizes cannot be right: a size is negative (a counter wrapped)"
              : *l2_size == 0 ? "L2ARC headers are held with no L2ARC data"
                              : "L2ARC allocated size is more than twice its logical size";
    f.advice = IsArcstore(ctx)
                   ? "The cache devices' accounting is off: compare with `arcstore pool info`, "
                     "and remove and re-add the cache device (pool remove-cache, add-cache)."
                   : "The L2ARC accounting is off (a known class of OpenZFS bugs). Compare with "
                     "zpool iostat -v for the cache device, upgrade, or remove and re-add the "
                     "cache device.";
    ctx.Add(std::move(f));
    return;
  }
  if (!l2_hdr || !size || *size <= 0 || *l2_size == 0) return;
  double pct = Pct(*l2_hdr, *size);
  if (pct < ctx.opt.l2_hdr_warn_pct) return;
  f.id = "l2arc_headers_large";
  f.severity = pct >= ctx.opt.l2_hdr_crit_pct ? Severity::kCritical : Severity::kWarning;
  f.title = "L2ARC headers take " + FormatSignedBytes(*l2_hdr) + " (" + Fmt("%.0f%%", pct) +
            " of the ARC) to index " + FormatSignedBytes(*l2_size) + " of L2ARC";
  f.advice = IsArcstore(ctx)
                 ? "Every block on a cache device keeps an index entry in RAM, counted in the "
                   "ARC's size, so a large cache device of small records starves the ARC it was "
                   "meant to extend. Use a smaller cache device, larger records (vol create "
                   "--recordsize), or more RAM."
                 : "Every L2ARC block keeps a header in RAM, so a large L2ARC of small blocks "
                   "starves the ARC it was meant to extend. Use a smaller cache device, larger "
                   "records, or more RAM instead.";
  ctx.Add(std::move(f));
}

void CheckColdCache(CheckContext& ctx) {
  auto v = ctx.Need("cold_cache", {"hits", "misses"}, "whether the cache has warmed up");
  if (!v) return;
  int64_t accesses = (*v)[0] + (*v)[1];
  if (accesses >= static_cast<int64_t>(ctx.opt.min_accesses)) return;
  Finding f{"cold_cache", Severity::kInfo, "", {}, ""};
  f.title = "cold cache: " + std::to_string(accesses) +
            " accesses since the statistics began (a recent import or boot); hit ratios are "
            "not meaningful yet";
  f.evidence = {ctx.Count("hits"), ctx.Count("misses")};
  if (ctx.view.Has("size")) f.evidence.push_back(ctx.Bytes("size"));
  f.advice = "Benign. Look again once the workload has run for a while.";
  ctx.Add(std::move(f));
}

}  // namespace arcstore::doctor::internal
