// StatsView: a normalized set of ARC statistics, whatever they came from.
//
// The doctor's findings and the summary read only this: name -> value, with
// the arcstats names (c, c_min, size, mru_evictable_data, ...), plus which
// reader produced it, which field set (pre-2.2, 2.2+, arcstore) it follows
// and why that was decided, which values are approximate (read back from an
// arc_summary report's rounded "15.5 GiB"), and notes on what the reader
// skipped. A dump from any OpenZFS or illumos machine and a snapshot of
// arcstore's own registry become the same kind of view, so one set of checks
// diagnoses both.
//
// Times: crtime and snaptime are kept in nanoseconds whatever the source
// printed (illumos prints seconds with decimals, Linux nanoseconds).
//
// Thread-safety: a value type; no internal synchronisation.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "stats/registry.h"

namespace arcstore::doctor {

enum class StatsFormat {
  kUnknown,
  kLinuxKstat,     // /proc/spl/kstat/zfs/arcstats: "name type data"
  kIllumosKstat,   // kstat -m zfs -n arcstats: "name value" under a module: header
  kIllumosKstatP,  // kstat -p: "zfs:0:arcstats:size 123"
  kFreeBsdSysctl,  // sysctl: "kstat.zfs.misc.arcstats.size: 123"
  kNameValue,      // bare "name value" lines (a grep of one of the above)
  kArcSummary,     // arc_summary 0.8+ / 2.x report
  kArcSummaryPy,   // the older arc_summary.py report
  kArcstore,       // arcstore's own stats registry
};
std::string_view FormatName(StatsFormat f);

enum class FieldSet { kUndecided, kPre22, k22Plus, kArcstore };
std::string_view FieldSetName(FieldSet f);

struct StatsView {
  StatsFormat format = StatsFormat::kUnknown;
  FieldSet field_set = FieldSet::kUndecided;
  std::string field_set_reason;  // "p, arc_meta_used present; no 2.2 fields"
  std::map<std::string, int64_t, std::less<>> values;
  std::set<std::string, std::less<>> approximate;
  std::vector<std::string> notes;

  std::optional<int64_t> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return values.count(name) > 0; }
  bool IsApproximate(std::string_view name) const { return approximate.count(name) > 0; }
  // First value wins; a second, different value is noted as a conflict.
  void Set(std::string_view name, int64_t value, bool is_approximate = false);
};

// Decides field_set and field_set_reason from the names present.
void DecideFieldSet(StatsView& view);

// A view of arcstore's own registry: module "arcstats" keeps plain names,
// other modules become "module.name"; histograms are left out.
StatsView FromSnapshot(const stats::Snapshot& snapshot);

}  // namespace arcstore::doctor
