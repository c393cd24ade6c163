// TraceReader: page requests from a block trace, as runs of consecutive keys.
//
// Formats (TraceFormat::kAuto picks one from the file name):
//  - kArcLis ("*.lis", "*.lis.zst"): the ARC paper's traces. Each line is
//    "start n ignored reqno" and means n page requests start, start+1, ...,
//    start+n-1 (one run).
//  - kLirs ("*.trace", "*.trace.gz"): the LIRS traces, one key per line; a
//    line holding only "*" is a checkpoint and is skipped.
//  - kCsv ("*.csv", "*.csv.gz"): "offset,size[,op]" in bytes, one request
//    per line (the columns can be moved with TraceOptions), split into pages
//    of page_bytes: the run floor(offset / page) .. floor((offset+size-1) /
//    page). With no size column the offset column is a page key itself (one
//    request per line: libCacheSim's csv "lbn"). A first line that does not
//    start with a digit is a header.
// Any of them may be zstd- or gzip-compressed (byte_source.h).
//
// Parsing is by hand over a 1 MiB buffer: no allocation per line, no
// locale, no exceptions. A malformed line is an error naming the line.
//
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "tools/sim/byte_source.h"

namespace arcstore::sim {

// The largest page key a trace may hold: the simulators' key space (Duet's
// and LIRS's nodes keep 48-bit keys, arc/duet_orders.h).
inline constexpr uint64_t kMaxTraceKey = (uint64_t{1} << 48) - 1;

// The page keys first, first+1, ..., first+count-1, requested in that order.
struct KeyRun {
  uint64_t first = 0;
  uint64_t count = 0;
  bool operator==(const KeyRun&) const = default;
};

enum class TraceFormat { kAuto, kArcLis, kLirs, kCsv };

// "auto", "lis", "lirs", "csv".
std::string_view TraceFormatName(TraceFormat format);
Result<TraceFormat> ParseTraceFormat(std::string_view name);
// The format a file name implies; kAuto when it implies none.
TraceFormat FormatFromPath(std::string_view path);

struct TraceOptions {
  TraceFormat format = TraceFormat::kAuto;
  // CSV only: the page size requests are split into, and the columns
  // (0-based; size_column -1 = the offset column holds page keys; op_column
  // -1 = none). With reads_only, lines whose op is a write ("W...", "w...",
  // "1") are skipped.
  uint64_t page_bytes = 512;
  int csv_offset_column = 0;
  int csv_size_column = 1;
  int csv_op_column = 2;
  bool reads_only = false;
};

class TraceReader {
 public:
  static Result<std::unique_ptr<TraceReader>> Open(const std::string& path,
                                                   const TraceOptions& options);

  // Fills `out` with up to out.size() runs; returns how many, 0 at the end.
  Result<size_t> Read(std::span<KeyRun> out);

  TraceFormat format() const { return format_; }
  const char* encoding() const { return source_->encoding(); }
  uint64_t file_bytes() const { return file_bytes_; }
  uint64_t file_offset() const { return source_->file_offset(); }
  uint64_t lines() const { return line_no_; }

 private:
  TraceReader(std::string path, const TraceOptions& options, TraceFormat format,
              std::unique_ptr<ByteSource> source, uint64_t file_bytes);
  // Moves the unparsed tail to the front and reads more; false at the end.
  Result<bool> Refill();
  // Parses one line [p, end) (no newline); appends 0 or 1 run.
  Status ParseLine(const char* p, const char* end, KeyRun* out, bool* got);
  Status ParseCsv(const char* p, const char* end, KeyRun* out, bool* got);
  Status LineError(std::string_view what) const;

  std::string path_;
  TraceOptions options_;
  TraceFormat format_;
  std::unique_ptr<ByteSource> source_;
  uint64_t file_bytes_;
  std::vector<char> buf_;
  size_t begin_ = 0;  // first unparsed byte
  size_t end_ = 0;    // end of valid bytes
  bool eof_ = false;
  uint64_t line_no_ = 0;
};

}  // namespace arcstore::sim
