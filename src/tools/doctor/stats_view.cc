#include "tools/doctor/stats_view.h"

#include <array>

namespace arcstore::doctor {

std::string_view FormatName(StatsFormat f) {
  switch (f) {
    case StatsFormat::kUnknown: return "unknown";
    case StatsFormat::kLinuxKstat: return "Linux /proc/spl/kstat/zfs/arcstats";
    case StatsFormat::kIllumosKstat: return "illumos kstat -m zfs -n arcstats";
    case StatsFormat::kIllumosKstatP: return "illumos kstat -p";
    case StatsFormat::kFreeBsdSysctl: return "FreeBSD sysctl kstat.zfs.misc.arcstats";
    case StatsFormat::kNameValue: return "name/value excerpt";
    case StatsFormat::kArcSummary: return "arc_summary (0.8+/2.x)";
    case StatsFormat::kArcSummaryPy: return "arc_summary.py (pre-0.8)";
    case StatsFormat::kArcstore: return "arcstore stats registry";
  }
  return "unknown";
}

std::string_view FieldSetName(FieldSet f) {
  switch (f) {
    case FieldSet::kUndecided: return "undecided";
    case FieldSet::kPre22: return "OpenZFS before 2.2 / illumos (p, arc_meta_*)";
    case FieldSet::k22Plus: return "OpenZFS 2.2+ (pd, pm, meta, iohits, uncached)";
    case FieldSet::kArcstore: return "arcstore";
  }
  return "undecided";
}

std::optional<int64_t> StatsView::Get(std::string_view name) const {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

void StatsView::Set(std::string_view name, int64_t value, bool is_approximate) {
  auto it = values.find(name);
  if (it != values.end()) {
    if (it->second != value && notes.size() < 64)
      notes.push_back(std::string(name) + " appears twice (" + std::to_string(it->second) +
                      " and " + std::to_string(value) + "): the first is used");
    return;
  }
  values.emplace(std::string(name), value);
  if (is_approximate) approximate.emplace(name);
}

void DecideFieldSet(StatsView& view) {
  if (view.format == StatsFormat::kArcstore) {
    view.field_set = FieldSet::kArcstore;
    view.field_set_reason = "read from arcstore's own registry";
    return;
  }
  static constexpr std::array<std::string_view, 11> k22 = {
      "pd", "pm", "meta", "iohits", "uncached_size", "uncached_hits", "anon_data",
      "mru_data", "mfu_data", "demand_data_iohits", "predictive_prefetch"};
  static constexpr std::array<std::string_view, 5> kPre = {
      "p", "arc_meta_used", "arc_meta_limit", "arc_meta_min", "arc_meta_max"};
  std::string found22, found_pre;
  for (auto n : k22)
    if (view.Has(n)) found22 += (found22.empty() ? "" : ", ") + std::string(n);
  for (auto n : kPre)
    if (view.Has(n)) found_pre += (found_pre.empty() ? "" : ", ") + std::string(n);
  if (!found22.empty() && !found_pre.empty()) {
    view.field_set = found22.size() >= found_pre.size() ? FieldSet::k22Plus : FieldSet::kPre22;
    view.field_set_reason = "both 2.2+ fields (" + found22 + ") and pre-2.2 fields (" +
                            found_pre + ") present: a mixed paste? assuming " +
                            std::string(FieldSetName(view.field_set));
  } else if (!found22.empty()) {
    view.field_set = FieldSet::k22Plus;
    view.field_set_reason = found22 + " present";
  } else if (!found_pre.empty()) {
    view.field_set = FieldSet::kPre22;
    view.field_set_reason = found_pre + " present";
  } else {
    view.field_set = FieldSet::kUndecided;
    view.field_set_reason =
        "none of p, arc_meta_* (pre-2.2) or pd, pm, meta, iohits, uncached_* (2.2+) present";
  }
}

StatsView FromSnapshot(const stats::Snapshot& snapshot) {
  StatsView view;
  view.format = StatsFormat::kArcstore;
  for (const auto& v : snapshot.values) {
    std::string name =
        v.info.module == "arcstats" ? v.info.name : v.info.module + "." + v.info.name;
    if (v.info.kind == stats::Kind::kCounter)
      view.Set(name, static_cast<int64_t>(v.counter));
    else if (v.info.kind == stats::Kind::kGauge)
      view.Set(name, v.gauge);
  }
  DecideFieldSet(view);
  return view;
}

}  // namespace arcstore::doctor
