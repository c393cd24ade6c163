// Prometheus text exposition (format 0.0.4) of a stats snapshot.
//
// Every stat becomes one metric family named arcstore_<module>_<name>, with
// characters outside [a-zA-Z0-9_] turned into '_', and:
//   - base units: a nanosecond stat is exported in seconds, its name's
//     "_ns" suffix becoming "_seconds" (or "_seconds" appended); a byte stat's
//     name ends in "_bytes" (appended when missing);
//   - counters end in "_total" (TYPE counter);
//   - gauges keep their name (TYPE gauge);
//   - log2 histograms become TYPE histogram: cumulative _bucket{le="..."}
//     series at each bucket's upper bound 2^i (in the exported unit) up to the
//     highest non-empty bucket, then le="+Inf", _sum and _count.
// HELP carries the stat's help text, escaped.
//
// Thread-safety: pure function over a snapshot.
#pragma once

#include <string>

#include "stats/registry.h"

namespace arcstore::stats {

// The exported family name of a stat (without _total/_bucket suffixes for
// counters and histograms: "arcstore_io_read_latency_seconds").
std::string PrometheusBaseName(const StatInfo& info);
std::string ToPrometheusText(const Snapshot& snapshot);

}  // namespace arcstore::stats
