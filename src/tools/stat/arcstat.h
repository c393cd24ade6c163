// arcstore stat: arcstat's columns for an arcstore pool, plus arcstore's own.
//
// Every field is a column with arcstat's name, width and meaning: rates are
// per second over the interval between two snapshots (counters subtract),
// sizes are the later snapshot's gauges, percentages are of the interval's
// accesses. Numbers print as arcstat prints them: scaled by 1000 (counts) or
// 1024 (bytes) with a K/M/G/T/P suffix, one decimal below 10 of a unit,
// right-aligned, columns separated by two spaces; the header repeats every
// kHeaderEvery rows. A value whose stats the snapshot lacks prints "-".
//
//   default (-f unset):  time read miss miss% dmis dm% pmis pm% mmis mm% arcsz c
//   -x:                  time mfu mru mfug mrug eskip dread pread read
//   -a (arcstore):       time read hit% arcsz c dirty dlim txg sync thrw thrms rmw hhc
//
// arcstore's fields: dirty (unsynced dirty bytes), dmax (dirty_max), dlim
// (the effective dirty limit min(dirty_max, c/2)), txg (open txg), sync (why
// the last txg synced), thrw (writes delayed by the throttle /s), thrms (ms
// of throttle delay per second, summed over writers), blkw (writes blocked
// at dirty_max /s), rmw (partial-record writes completed from the committed
// record, whether the ARC held it or it was read from disk /s), rmwd
// (... served from a dirty copy /s), and held bytes by holder kind: hhc
// (handle cache), hdr (dirty records), hrd (reads in flight), hsw (sync
// writes), hnbd (NBD requests), hapi (API users).
//
// Thread-safety: pure functions and a value-type printer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "stats/registry.h"

namespace arcstore::tools {

inline constexpr int kHeaderEvery = 20;
inline constexpr std::string_view kDefaultFields =
    "time,read,miss,miss%,dmis,dm%,pmis,pm%,mmis,mm%,arcsz,c";
inline constexpr std::string_view kExtendedFields = "time,mfu,mru,mfug,mrug,eskip,dread,pread,read";
inline constexpr std::string_view kArcstoreFields =
    "time,read,hit%,arcsz,c,dirty,dlim,txg,sync,thrw,thrms,rmw,hhc";

// What one row is computed from.
struct StatInterval {
  const stats::Snapshot* delta = nullptr;  // Delta(earlier, later)
  const stats::Snapshot* now = nullptr;    // the later snapshot
  double seconds = 1;                      // the interval; rates divide by it
  std::string time;                        // "HH:MM:SS"
  std::string last_sync_reason;            // from the txg history; "" unknown
};

struct StatField;  // a column: name, width, scale, meaning, how to compute

// Parses "read,hits,hit%" into columns; an unknown name is an error that
// names it and lists the valid ones.
Result<std::vector<const StatField*>> ParseStatFields(std::string_view list);
// "name  meaning" for every field, for -v.
std::string DescribeStatFields();

std::string StatHeader(const std::vector<const StatField*>& fields);
std::string StatRow(const std::vector<const StatField*>& fields, const StatInterval& interval);

// arcstat's number format: `width` columns, `scale` 1000 or 1024.
std::string PrettyNumber(double value, int width, int scale);

// Prints the header before the first row and every kHeaderEvery rows.
class StatPrinter {
 public:
  explicit StatPrinter(std::vector<const StatField*> fields) : fields_(std::move(fields)) {}
  std::string Next(const StatInterval& interval);

 private:
  std::vector<const StatField*> fields_;
  int rows_ = 0;
};

}  // namespace arcstore::tools
