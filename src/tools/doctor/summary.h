// An arc_summary-style report of a StatsView: sizes against targets, the
// states with their evictable and ghost sizes, hit ratios by demand/prefetch
// and data/metadata, and memory. It reads only arcstats names, so a dump from
// OpenZFS and arcstore's own stats print the same layout. A field the view
// lacks prints as "-" and is listed at the end; approximate values (read back
// from a report's rounded figures) are marked "~".
//
// For arcstore's own stats (format kArcstore) it adds arcstore's sections:
// changes of c by cause, held bytes by holder kind, the handle cache, dirty
// data and the throttle (with the effective dirty limit min(dirty_max, c/2)),
// and txgs synced by reason. Other reports (arcstore summary POOL's txg
// timing) append sections in the same layout with the two helpers below.
//
// Thread-safety: pure functions; the strings are owned by the caller.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tools/doctor/stats_view.h"

namespace arcstore::doctor {

std::string RenderSummary(const StatsView& view);

// The report's layout: a blank line and a heading with right-aligned column
// names; rows of an indented 32-column label and 14-column cells.
void AppendSummaryHeading(std::string* out, std::string_view title,
                          const std::vector<std::string>& columns);
void AppendSummaryRow(std::string* out, std::string_view label, const std::vector<std::string>& cells);

}  // namespace arcstore::doctor
