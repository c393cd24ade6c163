// IoTrace: the optional per-I/O trace of a device queue, written to a file.
//
// Completions and txg markers go into a fixed-size ring under a short lock
// (a copy of one small record); a background writer thread drains the ring
// to the file whenever it is a quarter full and when the trace stops. When
// the ring is full a record is dropped and counted (io.trace_dropped), so a
// slow disk under the trace file never slows the I/O path.
//
// File format (docs/format.md, "I/O trace"), text, times in ns since Start:
//   # arcstore io trace v3
//   I <submit_ns> <issue_ns> <done_ns> <class> <op> <offset> <bytes> <parts> <ok|error>
//   T <ns> sync_start <txg>
//   T <ns> sync_end <txg>
//   W <start_ns> <done_ns> <op> <offset> <bytes> <space_ns> <buffer_ns> <throttle_ns>
//     <lock_ns> <rmw_read_ns> <ok|error>
//   C <submit_ns> <done_ns> <cache> <class> <op> <offset> <bytes> <ok|error>
// W is an application's write (or trim, or zeroing) as a volume ran it: its
// span and the time it waited at each place a writer can wait. C is a read
// or write of cache device <cache> (the N of its stats module l2arc.N): an
// ARC miss served by the second cache level, a slot the feed wrote, a
// rebuild's read; a cache device has no queue, so it has no issue time.
// (fields separated by one tab).
//
// Thread-safety: Add* may be called from any thread; Stop() from one
// thread, after which Add* must no longer be called. The trace owns its
// file and its writer thread; destroying it stops it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "io/device.h"
#include "stats/stats.h"

namespace arcstore::io {

// Bounds of the ring a trace may ask for.
inline constexpr uint64_t kMinTraceRingEntries = 4;
inline constexpr uint64_t kMaxTraceRingEntries = 1ull << 24;

// One completed I/O, with absolute Clock times.
struct TracedIo {
  uint64_t submit_ns = 0;
  uint64_t issue_ns = 0;
  uint64_t done_ns = 0;
  IoClass cls = IoClass::kSyncRead;
  IoOp op = IoOp::kRead;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint32_t parts = 1;
  bool ok = true;
};

enum class TraceMarker : uint8_t { kSyncStart, kSyncEnd };

// One application write as the volume layer ran it, with absolute Clock
// times, and its waits in the order of the W line's columns.
enum class TracedWriteOp : uint8_t { kWrite, kTrim, kZero };
inline constexpr int kTracedWaits = 5;  // space, buffer, throttle, lock, rmw_read
struct TracedWrite {
  uint64_t start_ns = 0;
  uint64_t done_ns = 0;
  TracedWriteOp op = TracedWriteOp::kWrite;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint64_t wait_ns[kTracedWaits] = {};
  bool ok = true;
};

// Makes the trace's file and returns a descriptor open for writing (the
// trace owns it). The pool passes format::CreateOutputFile, which refuses
// existing files, devices and pools; CreateNewTraceFile is the plain one.
using TraceFileOpener = std::function<Result<int>(const std::string& path)>;

// Creates `path` with O_EXCL (an existing file is AlreadyExists).
Result<int> CreateNewTraceFile(const std::string& path);

class IoTrace {
 public:
  // Checks the ring size (InvalidArgument out of bounds), makes the file with
  // `open` (CreateNewTraceFile when empty; its error is returned as it is)
  // and writes the header line.
  static Result<std::unique_ptr<IoTrace>> Start(const std::string& path, uint64_t ring_entries,
                                                Clock* clock, stats::Counter* dropped,
                                                const TraceFileOpener& open = {});
  ~IoTrace();
  IoTrace(const IoTrace&) = delete;
  IoTrace& operator=(const IoTrace&) = delete;

  void AddIo(const TracedIo& io);
  void AddMarker(TraceMarker marker, uint64_t txg);
  void AddWrite(const TracedWrite& write);
  void AddCacheIo(uint32_t cache, const TracedIo& io);
  // Drains the ring, closes the file; the first write error, if any.
  Status Stop();
  // Test hook: while held, the writer thread does not drain the ring (so a
  // test can fill it and see exactly which records are dropped).
  void HoldWriterForTest(bool hold);

  const std::string& path() const { return path_; }

 private:
  struct Record {
    enum class Type : uint8_t { kIo, kMarker, kWrite, kCacheIo } type = Type::kIo;
    TracedIo io;        // I/Os and cache I/Os
    uint32_t cache = 0;  // cache I/Os only
    uint64_t txg = 0;  // markers only
    TraceMarker kind = TraceMarker::kSyncStart;
    TracedWrite write;  // writes only
  };
  IoTrace(std::string path, std::FILE* file, uint64_t ring_entries, Clock* clock,
          stats::Counter* dropped);
  void Push(const Record& r);
  void WriterLoop();
  void WriteRecords(const std::vector<Record>& records) ARC_REQUIRES(file_mu_);
  int WriteLine(const TracedWrite& w) ARC_REQUIRES(file_mu_);
  Status DrainToFile();

  const std::string path_;
  Clock* const clock_;
  stats::Counter* const dropped_;
  const uint64_t start_ns_;
  const uint64_t wake_at_;  // records in the ring that wake the writer

  Mutex mu_;  // the ring
  CondVar cv_;
  std::vector<Record> ring_ ARC_GUARDED_BY(mu_);
  uint64_t head_ ARC_GUARDED_BY(mu_) = 0;   // oldest record
  uint64_t count_ ARC_GUARDED_BY(mu_) = 0;  // records in the ring
  bool stopping_ ARC_GUARDED_BY(mu_) = false;
  bool hold_writer_ ARC_GUARDED_BY(mu_) = false;

  Mutex file_mu_;  // the file (writer thread and Stop)
  std::FILE* file_ ARC_GUARDED_BY(file_mu_);
  Status write_error_ ARC_GUARDED_BY(file_mu_);
  std::thread writer_;
};

}  // namespace arcstore::io
