// arcstore summary POOL: the arc_summary-style report of an arcstore pool.
//
// The same report `arcstore summary --arcstats FILE` prints for OpenZFS
// dumps (tools/doctor/summary.h, through doctor::FromSnapshot), so both read
// alike, with arcstore's sections (changes of c by cause, held bytes by
// holder kind, handle cache, dirty data and throttle, syncs by reason), and
// then the txg timing this report alone has: committed txgs, the interval
// between them, sync time (mean, max, and the txg.sync_time_ns quantiles),
// and throttle time, from the txg history.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "stats/registry.h"
#include "tools/source/stats_source.h"

namespace arcstore::tools {

std::string RenderPoolSummary(const stats::Snapshot& snapshot, const std::vector<TxgRow>& txgs);

}  // namespace arcstore::tools
