// The per-I/O trace file (`arcstore trace start|stop`, Pool::StartTrace),
// read back for `arcstore plot`. The format is fixed (docs/observability.md):
//
//   # arcstore io trace v3          (v2: without C lines; v1: without W and C)
//   I <submit_ns> <issue_ns> <done_ns> <class> <op> <offset> <bytes> <parts> <ok|error>
//   T <ns> sync_start <txg>
//   T <ns> sync_end <txg>
//   W <start_ns> <done_ns> <op> <offset> <bytes> <space_ns> <buffer_ns> <throttle_ns>
//     <lock_ns> <rmw_read_ns> <ok|error>
//   C <submit_ns> <done_ns> <cache> <class> <op> <offset> <bytes> <ok|error>
//
// tab-separated, times in ns since the trace started. Lines starting with
// '#' after the first are comments. The reader treats its input as hostile:
// every error names the line and the field; at most kMaxTraceLines lines.
//
// Samples: the output of `arcstore stat --json`, one stats snapshot
// (stats/wire.h) per line, read by ReadSamples.
//
// Thread-safety: pure functions; results owned by the caller.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "stats/registry.h"

namespace arcstore::tools {

inline constexpr std::string_view kTraceHeader = "# arcstore io trace v3";
inline constexpr std::string_view kTraceHeaderV2 = "# arcstore io trace v2";
inline constexpr std::string_view kTraceHeaderV1 = "# arcstore io trace v1";
inline constexpr size_t kMaxTraceLines = 50'000'000;

struct TraceIo {
  uint64_t submit_ns = 0, issue_ns = 0, done_ns = 0;
  std::string io_class;  // sync_read, sync_write, async_read, async_write, log_write
  std::string op;        // read, write, flush, ...
  uint64_t offset = 0, bytes = 0;
  uint32_t parts = 1;    // I/Os aggregated into this one
  bool ok = true;
};

// An application write as the volume ran it (a W line): its span and its
// time at each place a writer waits, in kWaitPlaces order.
inline constexpr int kTraceWaitPlaces = 5;
inline constexpr const char* kWaitPlaces[kTraceWaitPlaces] = {"space", "buffer", "throttle", "lock",
                                                              "rmw_read"};
struct TraceWrite {
  uint64_t start_ns = 0, done_ns = 0;
  std::string op;  // write, trim, zero
  uint64_t offset = 0, bytes = 0;
  uint64_t wait_ns[kTraceWaitPlaces] = {};
  bool ok = true;
};

struct TraceSync {
  uint64_t txg = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;  // == start_ns when the trace stopped before the end
};

// A cache device's read or write (a C line); `cache` is the N of its stats
// module l2arc.N. parts is 1 and issue_ns is submit_ns (no queue).
struct TraceCacheIo {
  uint32_t cache = 0;
  TraceIo io;
};

struct Trace {
  std::vector<TraceIo> ios;
  std::vector<TraceCacheIo> cache_ios;
  std::vector<TraceWrite> writes;
  std::vector<TraceSync> syncs;  // in start order
};

Result<Trace> ParseTrace(std::string_view text);
Result<Trace> ReadTraceFile(const std::string& path);
Result<std::vector<stats::Snapshot>> ReadSamples(std::string_view text);

// Reads a whole file (at most `limit_bytes`); errors name the path.
Result<std::string> ReadWholeFile(const std::string& path, size_t limit_bytes);

}  // namespace arcstore::tools
