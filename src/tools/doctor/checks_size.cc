// Checks of the ARC's size control loop: the target, the size, what can be
// evicted, and the memory the ARC believes it has.
#include <cstdio>

#include "base/units.h"
#include "tools/doctor/arcstore_stat_names.h"
#include "tools/doctor/checks.h"

namespace arcstore::doctor::internal {
namespace {

double Ratio(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / b : 0.0; }
double Pct(int64_t a, int64_t b) { return 100.0 * Ratio(a, b); }

void AddMemoryEvidence(const CheckContext& ctx, std::vector<Evidence>& ev) {
  for (auto n : {"memory_all_bytes", "memory_free_bytes", "memory_available_bytes",
                 "arc_sys_free", "arc_need_free"})
    if (ctx.view.Has(n)) ev.push_back(ctx.Bytes(n));
}

constexpr std::string_view kEvictable[] = {"mru_evictable_data", "mru_evictable_metadata",
                                           "mfu_evictable_data", "mfu_evictable_metadata"};

std::optional<int64_t> Evictable(const CheckContext& ctx, std::vector<std::string>* missing) {
  return ctx.SumPresent({kEvictable[0], kEvictable[1], kEvictable[2], kEvictable[3]}, missing);
}

}  // namespace

std::string DominantHolder(const CheckContext& ctx, std::vector<Evidence>* evidence) {
  int64_t total = 0, best = -1;
  std::string_view best_kind;
  for (auto kind : names::kHolderKinds) {
    auto v = ctx.Opt(std::string(names::kHeldBytesPrefix) + std::string(kind));
    if (!v) continue;
    total += *v;
    if (*v > best) best = *v, best_kind = kind;
    if (*v > 0 && evidence)
      evidence->push_back(
          ctx.Bytes(std::string(names::kHeldBytesPrefix) + std::string(kind)));
  }
  if (best <= 0) return "";
  char pct[32];
  std::snprintf(pct, sizeof(pct), "%.0f%%", Pct(best, total));
  return std::string(best_kind) + " holds " + FormatSignedBytes(best) + " (" + pct +
         " of held bytes)";
}

// The target has collapsed when c sits at its floor c_min, or when it has
// fallen to a small share of c_max while size stays far above it (whatever
// c_min is: a floor set high or low does not make that healthy).
void CheckTargetCollapsed(CheckContext& ctx) {
  auto v = ctx.Need("target_collapsed", {"c", "c_min", "c_max"},
                    "whether the target c sits at its floor c_min");
  if (!v) return;
  int64_t c = (*v)[0], c_min = (*v)[1], c_max = (*v)[2];
  auto size = ctx.Opt("size");
  const bool at_floor = c_max >= 2 * c_min && c_min > 0 &&  // room between floor and ceiling
                        static_cast<double>(c) <= c_min * (1 + ctx.opt.floor_margin_pct / 100.0);
  const bool far_below_max = c > 0 && c_max > 0 &&
                             Pct(c, c_max) <= ctx.opt.collapsed_of_max_pct && size &&
                             Ratio(*size, c) >= ctx.opt.over_target_crit_ratio;
  if (!at_floor && !far_below_max) return;
  MemoryState mem = ReadMemory(ctx);
  Finding f{"target_collapsed", Severity::kWarning, "", {}, ""};
  f.evidence = {ctx.Bytes("c"), ctx.Bytes("c_min"), ctx.Bytes("c_max"),
                CheckContext::PercentOf("c / c_max", Pct(c, c_max))};
  if (size) {
    f.evidence.push_back(ctx.Bytes("size"));
    f.evidence.push_back(CheckContext::RatioOf("size / c", Ratio(*size, c)));
  }
  AddMemoryEvidence(ctx, f.evidence);
  for (auto cause : names::kCCauses) {  // arcstore records every change of c by cause
    std::string n = std::string(names::kCChangeBytesPrefix) + std::string(cause);
    if (ctx.Opt(n).value_or(0) > 0) f.evidence.push_back(ctx.Bytes(n));
  }
  char ratio[32];
  std::snprintf(ratio, sizeof(ratio), "%.1fx", size ? Ratio(*size, c) : 0.0);
  if (!at_floor) {
    char share[32];
    std::snprintf(share, sizeof(share), "%.1f%%", Pct(c, c_max));
    f.severity = Severity::kCritical;
    f.title = std::string("target c collapsed to ") + share + " of c_max while size is " + ratio +
              " c: the size control loop has failed";
  } else if (size && Ratio(*size, c) >= ctx.opt.over_target_crit_ratio) {
    f.severity = Severity::kCritical;
    f.title = std::string("target c collapsed to its floor c_min while size is ") + ratio +
              " c: the size control loop has failed";
  } else if (mem.FreeIsHigh(ctx.opt)) {
    f.severity = Severity::kCritical;
    f.title = "target c collapsed to its floor c_min while memory is free";
  } else if (mem.IsShort(ctx.opt)) {
    f.severity = Severity::kInfo;
    f.title = "target c is at its floor c_min because memory is short: the ARC is yielding";
  } else {
    f.title = "target c is at (or near) its floor c_min";
    std::vector<std::string> missing;
    for (auto n : {"memory_all_bytes", "memory_free_bytes"})
      if (!ctx.view.Has(n)) missing.emplace_back(n);
    if (!missing.empty())
      ctx.Undecide("target_collapsed", missing, "whether memory is free while c sits at c_min");
  }
  f.advice =
      "The ARC lowered c toward its floor and it stayed there. Find what reports memory "
      "pressure: the "
      "kernel's reserves (illumos lotsfree/desfree/swapfs_minfree, Linux arc_sys_free or a "
      "cgroup limit) and whether memory_available_bytes is negative while memory is free. With "
      "c at its floor, dirty data is capped at a share of c, so txgs sync far more often and "
      "small writes crawl.";
  ctx.Add(std::move(f));
}

void CheckSizeOverTarget(CheckContext& ctx) {
  auto v = ctx.Need("size_over_target", {"size", "c"}, "how far size is above the target c");
  if (!v) return;
  int64_t size = (*v)[0], c = (*v)[1];
  if (c <= 0 || size - c < static_cast<int64_t>(ctx.opt.min_overshoot_bytes)) return;
  double ratio = Ratio(size, c);
  if (ratio < ctx.opt.over_target_warn_ratio) return;
  Finding f{"size_over_target", Severity::kWarning, "", {}, ""};
  f.severity = ratio >= ctx.opt.over_target_crit_ratio ? Severity::kCritical : Severity::kWarning;
  f.evidence = {ctx.Bytes("size"), ctx.Bytes("c"), CheckContext::RatioOf("size / c", ratio),
                CheckContext::BytesOf("size - c", size - c)};
  std::vector<std::string> missing;
  auto evictable = Evictable(ctx, &missing);
  char head[96];
  std::snprintf(head, sizeof(head), "size is %.1fx the target c (%s above it)", ratio,
                FormatSignedBytes(size - c).c_str());
  f.title = head;
  if (evictable) {
    f.evidence.push_back(CheckContext::BytesOf("evictable (mru + mfu)", *evictable));
    f.title += static_cast<double>(*evictable) < ctx.opt.evictable_low_pct / 100.0 * size
                   ? ", and almost nothing is evictable"
                   : ", " + FormatSignedBytes(*evictable) + " of it evictable";
  } else {
    f.title += "; how much is evictable is unknown";
  }
  for (auto n : {"overhead_size", "evict_skip", "evict_not_enough", "memory_throttle_count"})
    if (ctx.view.Has(n))
      f.evidence.push_back(std::string_view(n) == "overhead_size" ? ctx.Bytes(n) : ctx.Count(n));
  f.advice =
      "The ARC must evict down to c. With nothing evictable, buffers are referenced by a "
      "consumer (see nothing_evictable); with plenty evictable, eviction is not keeping up "
      "(evict_skip, evict_not_enough, mutex_miss). New writes are throttled meanwhile.";
  ctx.Add(std::move(f));
}

void CheckEvictable(CheckContext& ctx) {
  std::vector<std::string> missing;
  auto evictable = Evictable(ctx, &missing);
  if (!evictable) {
    ctx.Undecide("nothing_evictable", missing, "how much of the ARC could be evicted");
    return;
  }
  auto size = ctx.Opt("size"), c = ctx.Opt("c");
  bool low = size ? static_cast<double>(*evictable) < ctx.opt.evictable_low_pct / 100.0 * *size
                  : *evictable == 0;
  if (!low) return;
  Finding f{"nothing_evictable", Severity::kCritical, "", {}, ""};
  for (auto n : kEvictable)
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Bytes(n));
  f.evidence.push_back(CheckContext::BytesOf("evictable (mru + mfu)", *evictable));
  if (size) f.evidence.push_back(ctx.Bytes("size"));
  if (c) f.evidence.push_back(ctx.Bytes("c"));
  std::string holder = DominantHolder(ctx, &f.evidence);
  f.title = *evictable == 0 ? "nothing is evictable" : "almost nothing is evictable";
  if (size && c) {
    if (*size < *c) {
      f.severity = Severity::kInfo;
      f.title += ", but size is below c: nothing needs evicting now";
    } else {
      f.title += ": the ARC cannot shrink to its target";
    }
  } else {
    std::vector<std::string> absent;
    if (!c) absent.emplace_back("c");
    if (!size) absent.emplace_back("size");
    f.severity = *evictable == 0 ? Severity::kCritical : Severity::kWarning;
    f.title += std::string(" (") + (absent.size() == 2 ? "c and size" : absent[0]) +
               " missing: cannot tell how far above its target the ARC is)";
    ctx.Undecide("nothing_evictable", absent, "whether the ARC is above its target c");
  }
  if (!holder.empty()) f.title += "; " + holder;
  if (!missing.empty()) f.evidence.push_back({"not in the dump", [&] {
                          std::string s;
                          for (const auto& m : missing) s += (s.empty() ? "" : ", ") + m;
                          return s;
                        }()});
  if (f.severity == Severity::kInfo) {
    f.advice = "Nothing to do while size stays below c. If size reaches c with this little "
               "evictable, the ARC will be unable to shrink: find what holds the buffers.";
    ctx.Add(std::move(f));
    return;
  }
  f.advice =
      "Every cached buffer is referenced, so eviction frees nothing. Something holds ARC "
      "buffers: on OpenZFS/illumos usually the dbuf cache, sized from physical memory rather "
      "than from c (lower dbuf_cache_max_bytes; reference tracking on a debug kernel names the "
      "holder). On arcstore the held_bytes_* stats name the holder kind.";
  ctx.Add(std::move(f));
}

void CheckOverhead(CheckContext& ctx) {
  // arcstore caches records as they are used (no compressed/uncompressed
  // pair), so it has no overhead_size to check.
  if (ctx.view.field_set == FieldSet::kArcstore) return;
  auto v = ctx.Need("overhead", {"overhead_size", "size", "c"},
                    "whether uncompressed copies (overhead_size) crowd the ARC");
  if (!v) return;
  int64_t overhead = (*v)[0], size = (*v)[1], c = (*v)[2];
  if (size <= c || static_cast<double>(overhead) <= ctx.opt.overhead_pct / 100.0 * size) return;
  Finding f{"overhead_large", Severity::kWarning, "", {}, ""};
  char title[128];
  std::snprintf(title, sizeof(title),
                "overhead_size is %s (%.0f%% of size) while the ARC is above its target",
                FormatSignedBytes(overhead).c_str(), Pct(overhead, size));
  f.title = title;
  f.evidence = {ctx.Bytes("overhead_size"), ctx.Bytes("size"), ctx.Bytes("c"),
                CheckContext::PercentOf("overhead_size / size", Pct(overhead, size))};
  f.advice =
      "overhead_size counts uncompressed or decrypted copies of referenced buffers, meant to be "
      "short-lived. A large, lasting overhead means buffers stay referenced: find the holder "
      "(see nothing_evictable).";
  ctx.Add(std::move(f));
}

void CheckNotYielding(CheckContext& ctx) {
  auto v = ctx.Need("not_yielding", {"size", "c_max"},
                    "whether the ARC holds near c_max while memory is short");
  if (!v) return;
  int64_t size = (*v)[0], c_max = (*v)[1];
  MemoryState mem = ReadMemory(ctx);
  if (!mem.available && !(mem.all && mem.free)) {
    ctx.Undecide("not_yielding",
                 {"memory_all_bytes", "memory_free_bytes", "memory_available_bytes"},
                 "whether the system is short of memory while the ARC is large");
    return;
  }
  if (static_cast<double>(size) < ctx.opt.near_max_pct / 100.0 * c_max || !mem.IsShort(ctx.opt))
    return;
  Finding f{"not_yielding", Severity::kCritical, "", {}, ""};
  char title[128];
  std::snprintf(title, sizeof(title),
                "the ARC holds %s (%.0f%% of c_max) while the system is short of memory",
                FormatSignedBytes(size).c_str(), Pct(size, c_max));
  f.title = title;
  f.evidence = {ctx.Bytes("size"), ctx.Bytes("c_max")};
  if (ctx.view.Has("c")) f.evidence.push_back(ctx.Bytes("c"));
  AddMemoryEvidence(ctx, f.evidence);
  for (auto n : {"arc_no_grow", "memory_throttle_count", "arc_prune"})
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Count(n));
  f.advice =
      "The ARC should give memory back under pressure. Check that the kernel's shrinker reaches "
      "it (Linux: zfs_arc_shrinker_limit, arc_need_free), whether unevictable buffers stop it, "
      "and lower zfs_arc_max if other users of the machine need the memory.";
  ctx.Add(std::move(f));
}

void CheckPressureWhileFree(CheckContext& ctx) {
  auto v = ctx.Need("pressure_while_free", {"memory_available_bytes"},
                    "whether the ARC is told memory is short");
  if (!v || (*v)[0] >= 0) return;
  MemoryState mem = ReadMemory(ctx);
  Finding f{"pressure_while_free", Severity::kCritical, "", {}, ""};
  AddMemoryEvidence(ctx, f.evidence);
  for (auto n : {"c", "c_min"})
    if (ctx.view.Has(n)) f.evidence.push_back(ctx.Bytes(n));
  if (mem.FreeIsHigh(ctx.opt)) {
    char title[160];
    std::snprintf(title, sizeof(title),
                  "memory pressure reported while memory is free: memory_available_bytes is %s "
                  "with %s (%.0f%%) free",
                  FormatSignedBytes(*mem.available).c_str(), FormatSignedBytes(*mem.free).c_str(),
                  Pct(*mem.free, *mem.all));
    f.title = title;
  } else if (!(mem.all && mem.free)) {
    f.severity = Severity::kWarning;
    f.title = "memory_available_bytes is negative: the ARC is being told to shrink";
    ctx.Undecide("pressure_while_free", {"memory_all_bytes", "memory_free_bytes"},
                 "whether memory is really short or the reserves are mis-sized");
  } else {
    return;  // real shortage: not_yielding covers it
  }
  f.advice =
      "The ARC's available memory is free memory minus the kernel's reserves. A mis-sized "
      "reserve makes the ARC see pressure that is not there and drive c to c_min (the seed: "
      "illumos swapfs_minfree at 128 GiB, illumos bug 16202). Check lotsfree, desfree and "
      "swapfs_minfree (illumos) or zfs_arc_sys_free / arc_sys_free (Linux).";
  ctx.Add(std::move(f));
}

}  // namespace arcstore::doctor::internal
