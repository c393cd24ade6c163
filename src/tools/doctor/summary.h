// An arc_summary-style report of a StatsView: sizes against targets, the
// states with their evictable and ghost sizes, hit ratios by demand/prefetch
// and data/metadata, and memory. It reads only arcstats names, so a dump from
// OpenZFS and arcstore's own stats print the same layout. A field the view
// lacks prints as "-" and is listed at the end; approximate values (read back
// from a report's rounded figures) are marked "~".
//
// Thread-safety: pure function; the string is owned by the caller.
#pragma once

#include <string>

#include "tools/doctor/stats_view.h"

namespace arcstore::doctor {

std::string RenderSummary(const StatsView& view);

}  // namespace arcstore::doctor
