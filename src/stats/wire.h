// Wire form of a stats snapshot: a JSON document that keeps every stat's
// kind, unit and help text, so that a snapshot taken in one process (a
// running `arcstore serve`) is the same Snapshot in another (a tool reading
// it through the control socket), and Delta() and the exporters work on it
// unchanged. ToJson() in registry.h is the human-facing form; this one is
// for machines and round-trips exactly.
//
//   {"format": "arcstore-stats-v1", "taken_ns": N,
//    "stats": [{"module": "arcstats", "name": "hits", "kind": "counter",
//               "unit": "ops", "help": "...", "value": 12},
//              {..., "kind": "histogram", "count": 3, "sum": 9, "max": 5,
//               "buckets": [[3, 2], [4, 1]]}]}       ([bucket index, count])
//
// FromWireJson treats its input as hostile: every error names the stat (by
// index and name) and the field that is wrong; inputs above kMaxWireBytes or
// with more than kMaxWireStats stats are refused.
//
// Thread-safety: pure functions; results are owned by the caller.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"
#include "stats/registry.h"

namespace arcstore::stats {

inline constexpr size_t kMaxWireBytes = 64 << 20;
inline constexpr size_t kMaxWireStats = 100000;

std::string ToWireJson(const Snapshot& snapshot);
Result<Snapshot> FromWireJson(std::string_view text);

// Kind and unit names as KindName/UnitName print them, back to values.
bool ParseKind(std::string_view name, Kind* kind);
bool ParseUnit(std::string_view name, Unit* unit);

}  // namespace arcstore::stats
