// The doctor: theory of operation.
//
// Purpose. In the seed it took weeks, DTrace, mdb and hand-made plots to learn
// that the ARC's target c had collapsed to c_min while size stayed 50x above
// it, that nothing was evictable because a front cache held every buffer, and
// that the OS reported memory pressure that was not there. Every one of those
// facts was in arcstats. The doctor reads them and says so.
//
// Model.
//
//   text dump --ReadArcStats--+
//                             +--> StatsView --Diagnose--> Report --> text | JSON | exit code
//   arcstore Registry --------+    (name -> value,          findings (severity, evidence, advice)
//     (FromSnapshot)                format, field set)      undecided checks (missing fields)
//                                                           reader notes
//
// Each check is a plain function over named values (checks.h). It either
// decides (and adds a finding, or stays silent when all is well) or records
// an Undecided with the fields it lacked. Checks never read the format: the
// same check diagnoses an illumos dump, a Linux 2.2 dump and an arcstore pool,
// and the arcstore-only checks simply find their stats missing in a ZFS dump
// (they record nothing then: absence of an arcstore stat in a ZFS dump is not
// news). After all checks, a report with no warning or critical gets one info
// finding, "healthy", carrying the key numbers.
//
// Severity. critical: the cache is not doing its job now (target collapsed
// with size far above it, nothing evictable above target, pressure invented
// while memory is free, impossible L2ARC sizes). warning: a cost or a risk
// (metadata over its limit, prune storms, cache too small, wasted prefetch).
// info: context (cold cache, at the floor because memory really is short,
// writers paced by the throttle with a dirty_max of normal size).
//
// Evidence minimums. A verdict needs enough events (accesses, syncs,
// throttled writes, partial writes, disk writes, bytes above c: the min_*
// DoctorOptions); a small pool in a test lowers them, never the rules.
// engine_findings_test.cc produces every arcstore finding in a real pool.
//
// Invariants. Findings are sorted most severe first, stable within a
// severity (check order). A value the dump lacks never appears in evidence.
// Exit code = worst severity (0 info, 1 warning, 2 critical).
//
// Locking: none (pure functions). Limits: the report holds at most one
// finding per check. Tunables: DoctorOptions (doctor.h). Stats: none.
#include "tools/doctor/doctor.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>

#include "base/units.h"
#include "tools/doctor/checks.h"

namespace arcstore::doctor {

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "info";
}

Severity Report::Worst() const {
  Severity worst = Severity::kInfo;
  for (const auto& f : findings) worst = std::max(worst, f.severity);
  return worst;
}

std::vector<std::string> Report::MissingFields() const {
  std::set<std::string> all;
  for (const auto& u : undecided) all.insert(u.missing.begin(), u.missing.end());
  return {all.begin(), all.end()};
}

const Finding* Report::Find(std::string_view id) const {
  for (const auto& f : findings)
    if (f.id == id) return &f;
  return nullptr;
}

Status DoctorOptions::Validate() const {
  struct Pct {
    const char* name;
    double v;
  } pcts[] = {{"floor_margin_pct", floor_margin_pct},   {"evictable_low_pct", evictable_low_pct},
              {"collapsed_of_max_pct", collapsed_of_max_pct},
              {"overhead_pct", overhead_pct},           {"free_memory_pct", free_memory_pct},
              {"low_memory_pct", low_memory_pct},       {"near_max_pct", near_max_pct},
              {"ghost_hit_pct", ghost_hit_pct},         {"low_hit_ratio_pct", low_hit_ratio_pct},
              {"prefetch_used_low_pct", prefetch_used_low_pct},
              {"l2_hdr_warn_pct", l2_hdr_warn_pct},     {"l2_hdr_crit_pct", l2_hdr_crit_pct},
              {"machine_stall_pct", machine_stall_pct}};
  for (const auto& p : pcts)
    if (!(p.v >= 0 && p.v <= 100))
      return Status::InvalidArgument(std::string(p.name) + " must be in [0, 100], got " +
                                     std::to_string(p.v));
  if (!(over_target_warn_ratio >= 1 && over_target_crit_ratio >= over_target_warn_ratio))
    return Status::InvalidArgument(
        "over_target_warn_ratio must be >= 1 and <= over_target_crit_ratio");
  if (!(dirty_max_small_ratio >= 1))
    return Status::InvalidArgument("dirty_max_small_ratio must be >= 1, got " +
                                   std::to_string(dirty_max_small_ratio));
  if (!(prune_rate_per_sec >= 0))
    return Status::InvalidArgument("prune_rate_per_sec must be >= 0");
  if (l2_hdr_crit_pct < l2_hdr_warn_pct)
    return Status::InvalidArgument("l2_hdr_crit_pct must be >= l2_hdr_warn_pct");
  return Status::Ok();
}

namespace internal {

std::string FormatSignedBytes(int64_t v) {
  if (v < 0) return "-" + FormatBytes(static_cast<uint64_t>(-(v + 1)) + 1);
  return FormatBytes(static_cast<uint64_t>(v));
}

std::optional<std::vector<int64_t>> CheckContext::Need(
    std::string_view check, std::initializer_list<std::string_view> names, std::string_view what) {
  std::vector<int64_t> out;
  std::vector<std::string> missing;
  for (auto n : names) {
    auto v = view.Get(n);
    if (v) out.push_back(*v);
    else missing.emplace_back(n);
  }
  if (missing.empty()) return out;
  Undecide(check, std::move(missing), std::string(what));
  return std::nullopt;
}

std::optional<int64_t> CheckContext::SumPresent(std::initializer_list<std::string_view> names,
                                                std::vector<std::string>* missing) const {
  std::optional<int64_t> sum;
  for (auto n : names) {
    auto v = view.Get(n);
    if (v) sum = sum.value_or(0) + *v;
    else if (missing) missing->emplace_back(n);
  }
  return sum;
}

void CheckContext::Undecide(std::string_view check, std::vector<std::string> missing,
                            std::string why) {
  report_.undecided.push_back({std::string(check), std::move(missing), std::move(why)});
}

Evidence CheckContext::BytesOf(std::string label, int64_t v, bool approx) {
  std::string s = (approx ? "~" : "") + FormatSignedBytes(v) + " (" + std::to_string(v) + ")";
  return {std::move(label), std::move(s)};
}

Evidence CheckContext::Bytes(std::string_view name) const {
  auto v = view.Get(name);
  return BytesOf(std::string(name), v.value_or(0), view.IsApproximate(name));
}

Evidence CheckContext::Count(std::string_view name) const {
  auto v = view.Get(name);
  return {std::string(name), (view.IsApproximate(name) ? "~" : "") + std::to_string(v.value_or(0))};
}

Evidence CheckContext::RatioOf(std::string label, double v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.1fx", v);
  return {std::move(label), buf};
}

Evidence CheckContext::PercentOf(std::string label, double pct) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), pct < 0.1 && pct > 0 ? "%.3f%%" : "%.1f%%", pct);
  return {std::move(label), buf};
}

MemoryState ReadMemory(const CheckContext& ctx) {
  return {ctx.Opt("memory_all_bytes"), ctx.Opt("memory_free_bytes"),
          ctx.Opt("memory_available_bytes")};
}

bool MemoryState::FreeIsHigh(const DoctorOptions& o) const {
  return all && free && *all > 0 &&
         static_cast<double>(*free) >= o.free_memory_pct / 100.0 * static_cast<double>(*all);
}

bool MemoryState::IsShort(const DoctorOptions& o) const {
  if (FreeIsHigh(o)) return false;
  if (available && *available < 0) return true;
  return all && free && *all > 0 &&
         static_cast<double>(*free) < o.low_memory_pct / 100.0 * static_cast<double>(*all);
}

}  // namespace internal

Report Diagnose(const StatsView& view, const DoctorOptions& options) {
  Report report;
  report.format = view.format;
  report.field_set = view.field_set;
  report.field_set_reason = view.field_set_reason;
  report.notes = view.notes;
  internal::CheckContext ctx(view, options, report);
  using Fn = void (*)(internal::CheckContext&);
  static constexpr Fn kChecks[] = {
      internal::CheckTargetCollapsed, internal::CheckSizeOverTarget, internal::CheckEvictable,
      internal::CheckOverhead,        internal::CheckNotYielding,    internal::CheckPressureWhileFree,
      internal::CheckCacheTooSmall,   internal::CheckPrefetch,       internal::CheckMetadata,
      internal::CheckDnodes,          internal::CheckArcPrune,       internal::CheckL2arc,
      internal::CheckColdCache,       internal::CheckSyncReasons,    internal::CheckRmw,
      internal::CheckNoProgress,      internal::CheckSmallWrites,    internal::CheckWriterWaits,
      internal::CheckMachineStalls,
  };
  for (Fn check : kChecks) check(ctx);
  if (report.Worst() == Severity::kInfo) {
    Finding f{"healthy", Severity::kInfo, "no warning or critical finding", {}, ""};
    for (auto n : {"size", "c", "c_min", "c_max"})
      if (view.Has(n)) f.evidence.push_back(ctx.Bytes(n));
    std::vector<std::string> missing;
    auto evictable = ctx.SumPresent({"mru_evictable_data", "mru_evictable_metadata",
                                     "mfu_evictable_data", "mfu_evictable_metadata"},
                                    &missing);
    if (evictable) f.evidence.push_back(ctx.BytesOf("evictable (mru + mfu)", *evictable));
    f.advice = report.undecided.empty()
                   ? "nothing to do"
                   : "nothing to do on these numbers; some checks could not be decided (see below)";
    report.findings.push_back(std::move(f));
  }
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  return report;
}

}  // namespace arcstore::doctor
