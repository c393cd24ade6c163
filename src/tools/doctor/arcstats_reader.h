// Readers of ARC statistics as people paste them.
//
//   Linux      /proc/spl/kstat/zfs/arcstats    "13 1 0x01 ..." / "name type data" / "hits 4 12"
//   illumos    kstat -m zfs -n arcstats         "module: zfs instance: 0" / "name: arcstats ..."
//                                               then "        hits      12"
//              kstat -p zfs:0:arcstats:size     "zfs:0:arcstats:size   12"
//   FreeBSD    sysctl kstat.zfs.misc.arcstats   "kstat.zfs.misc.arcstats.size: 12"
//   any        grep excerpts of the above       "        size      12"
//   reports    arc_summary (0.8+, 2.x, 2.2+) and arc_summary.py, read back from
//              their labels and human units ("15.5 GiB", "1.2M", "1.21b")
//
// Partial dumps are normal: whatever is recognised is used, everything else is
// counted and the first few such lines are quoted in the view's notes. Shell
// prompts and "... elided" remarks are skipped. A second dump in the same
// input (a new "module:" or "name type data" header after stats) ends the
// read, with a note. Values are never invented: a report's rounded values are
// marked approximate, and uint64 values above 2^63-1 are kept as their signed
// (wrapped) value with a note, since such values only come from counters that
// went below zero.
//
// Never crashes on any input (fuzzed by arcstats_fuzzer). Inputs longer than
// kMaxArcStatsInputBytes are rejected; an input with no ARC statistic in it is
// InvalidArgument.
//
// Thread-safety: reentrant. The returned view is owned by the caller.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "base/result.h"
#include "tools/doctor/stats_view.h"

namespace arcstore::doctor {

inline constexpr size_t kMaxArcStatsInputBytes = 16 << 20;

// Detects the format and reads it; decides the field set.
Result<StatsView> ReadArcStats(std::string_view text);

// The two families, for tests.
bool LooksLikeArcSummary(std::string_view text);
StatsView ReadKstatLines(std::string_view text);
StatsView ReadArcSummary(std::string_view text);

// One value as arc_summary prints it: "15.5 GiB", "0 Bytes", "1.2M", "961.9k",
// "1.21b", "42". `exact` when it has no unit and no decimal point.
struct HumanValue {
  int64_t value = 0;
  bool exact = false;
};
// `number` is the numeric token, `unit` the token after it (may be empty).
// Returns the value and whether the unit token was consumed.
std::optional<HumanValue> ParseHumanValue(std::string_view number, std::string_view unit,
                                          bool* used_unit);

}  // namespace arcstore::doctor
