// arcstore txgs: the txg history as the `txgs` kstat prints it
// (/proc/spl/kstat/zfs/<pool>/txgs: txg birth state ndirty nread nwritten
// reads writes otime qtime wtime stime, times in ns), plus arcstore's
// columns: why the txg synced and how long its writers were throttled
// (delay, delayed writes, blocked at dirty_max, waiting on the ARC's dirty
// limit). A closing summary counts syncs by reason with their mean and
// largest sync time and the mean interval between syncs, the figure that
// showed the seed's throttle-driven syncs every 400 ms.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "tools/source/stats_source.h"

namespace arcstore::tools {

std::string RenderTxgs(const std::vector<TxgRow>& rows);

}  // namespace arcstore::tools
