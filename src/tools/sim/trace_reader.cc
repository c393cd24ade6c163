#include "tools/sim/trace_reader.h"

#include <algorithm>
#include <cstring>

namespace arcstore::sim {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Parses an unsigned decimal at *p (after blanks); false if there is none or
// it overflows 64 bits.
inline bool ParseU64(const char** pp, const char* end, uint64_t* v) {
  const char* p = *pp;
  while (p < end && IsBlank(*p)) p++;
  if (p == end || !IsDigit(*p)) return false;
  uint64_t x = 0;
  while (p < end && IsDigit(*p)) {
    const uint64_t d = static_cast<uint64_t>(*p - '0');
    if (x > (UINT64_MAX - d) / 10) return false;
    x = x * 10 + d;
    p++;
  }
  *v = x;
  *pp = p;
  return true;
}

}  // namespace

std::string_view TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kAuto: return "auto";
    case TraceFormat::kArcLis: return "lis";
    case TraceFormat::kLirs: return "lirs";
    case TraceFormat::kCsv: return "csv";
  }
  return "?";
}

Result<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (TraceFormat f : {TraceFormat::kAuto, TraceFormat::kArcLis, TraceFormat::kLirs,
                        TraceFormat::kCsv}) {
    if (name == TraceFormatName(f)) return f;
  }
  return Status::InvalidArgument("unknown trace format '" + std::string(name) +
                                 "' (auto, lis, lirs or csv)");
}

TraceFormat FormatFromPath(std::string_view path) {
  for (std::string_view z : {".zst", ".gz", ".zstd", ".gzip"}) {
    if (EndsWith(path, z)) {
      path.remove_suffix(z.size());
      break;
    }
  }
  if (EndsWith(path, ".lis")) return TraceFormat::kArcLis;
  if (EndsWith(path, ".trace")) return TraceFormat::kLirs;
  if (EndsWith(path, ".csv")) return TraceFormat::kCsv;
  return TraceFormat::kAuto;
}

Result<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path,
                                                       const TraceOptions& options) {
  TraceFormat format = options.format;
  if (format == TraceFormat::kAuto) format = FormatFromPath(path);
  if (format == TraceFormat::kAuto) {
    return Status::InvalidArgument(path +
                                   ": cannot tell the trace format from the name "
                                   "(.lis[.zst], .trace[.gz], .csv[.gz]); say --format");
  }
  if (format == TraceFormat::kCsv && options.page_bytes == 0) {
    return Status::InvalidArgument("page size must be > 0");
  }
  uint64_t file_bytes = 0;
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path, &file_bytes));
  return std::unique_ptr<TraceReader>(
      new TraceReader(path, options, format, std::move(source), file_bytes));
}

TraceReader::TraceReader(std::string path, const TraceOptions& options, TraceFormat format,
                         std::unique_ptr<ByteSource> source, uint64_t file_bytes)
    : path_(std::move(path)),
      options_(options),
      format_(format),
      source_(std::move(source)),
      file_bytes_(file_bytes),
      buf_(kBufferBytes) {}

Status TraceReader::LineError(std::string_view what) const {
  return Status::Corruption(path_ + ":" + std::to_string(line_no_) + ": " + std::string(what));
}

Result<bool> TraceReader::Refill() {
  if (eof_) return false;
  const size_t tail = end_ - begin_;
  if (tail == buf_.size()) return LineError("line longer than 1 MiB");
  std::memmove(buf_.data(), buf_.data() + begin_, tail);
  begin_ = 0;
  end_ = tail;
  while (end_ < buf_.size()) {
    ARC_ASSIGN_OR_RETURN(size_t got, source_->Read(buf_.data() + end_, buf_.size() - end_));
    if (got == 0) {
      eof_ = true;
      break;
    }
    end_ += got;
  }
  return true;
}

Result<size_t> TraceReader::Read(std::span<KeyRun> out) {
  size_t n = 0;
  while (n < out.size()) {
    const char* base = buf_.data();
    const void* nl = std::memchr(base + begin_, '\n', end_ - begin_);
    const char* line_end;
    if (nl != nullptr) {
      line_end = static_cast<const char*>(nl);
    } else if (!eof_) {
      ARC_ASSIGN_OR_RETURN(bool more, Refill());
      if (!more) break;
      continue;
    } else if (begin_ < end_) {
      line_end = base + end_;  // a last line without a newline
    } else {
      break;
    }
    const char* p = base + begin_;
    begin_ = static_cast<size_t>(line_end - base) + (line_end < base + end_ ? 1 : 0);
    line_no_++;
    bool got = false;
    ARC_RETURN_IF_ERROR(ParseLine(p, line_end, &out[n], &got));
    if (!got) continue;
    if (out[n].first > kMaxTraceKey || out[n].count - 1 > kMaxTraceKey - out[n].first) {
      return LineError("page keys beyond 2^48 - 1, the simulator's key space");
    }
    n++;
  }
  return n;
}

Status TraceReader::ParseLine(const char* p, const char* end, KeyRun* out, bool* got) {
  switch (format_) {
    case TraceFormat::kArcLis: {
      // "start n 0 reqno": the first two fields are all we need.
      uint64_t start, count;
      if (!ParseU64(&p, end, &start)) {
        while (p < end && IsBlank(*p)) p++;
        if (p == end) return Status::Ok();  // blank line
        return LineError("expected 'start count ignored reqno'");
      }
      if (!ParseU64(&p, end, &count)) return LineError("expected a block count after the start");
      if (count == 0) return Status::Ok();
      *out = KeyRun{start, count};
      *got = true;
      return Status::Ok();
    }
    case TraceFormat::kLirs: {
      uint64_t key;
      const char* q = p;
      if (ParseU64(&q, end, &key)) {
        *out = KeyRun{key, 1};
        *got = true;
        return Status::Ok();
      }
      while (p < end && IsBlank(*p)) p++;
      if (p == end || *p == '*') return Status::Ok();  // blank line or checkpoint marker
      return LineError("expected a block number or '*'");
    }
    case TraceFormat::kCsv: return ParseCsv(p, end, out, got);
    case TraceFormat::kAuto: break;
  }
  return Status::Internal("trace reader without a format");
}

Status TraceReader::ParseCsv(const char* p, const char* end, KeyRun* out, bool* got) {
  // Split into at most 16 columns, in place.
  const char* col[16];
  const char* col_end[16];
  int ncols = 0;
  const char* c = p;
  while (ncols < 16) {
    const void* comma = std::memchr(c, ',', static_cast<size_t>(end - c));
    const char* e = comma ? static_cast<const char*>(comma) : end;
    col[ncols] = c;
    col_end[ncols] = e;
    ncols++;
    if (e == end) break;
    c = e + 1;
  }
  const int need = std::max(options_.csv_offset_column, options_.csv_size_column);
  const char* first = p;
  while (first < end && IsBlank(*first)) first++;
  if (first == end) return Status::Ok();
  if (!IsDigit(*first)) {
    if (line_no_ == 1) return Status::Ok();  // header
    return LineError("expected numbers");
  }
  if (ncols <= need) return LineError("too few columns");
  uint64_t offset, size = 0;
  const char* q = col[options_.csv_offset_column];
  if (!ParseU64(&q, col_end[options_.csv_offset_column], &offset)) return LineError("bad offset");
  if (options_.csv_size_column >= 0) {
    q = col[options_.csv_size_column];
    if (!ParseU64(&q, col_end[options_.csv_size_column], &size)) return LineError("bad size");
  }
  if (options_.reads_only && options_.csv_op_column >= 0 && options_.csv_op_column < ncols) {
    const char* op = col[options_.csv_op_column];
    while (op < col_end[options_.csv_op_column] && IsBlank(*op)) op++;
    if (op < col_end[options_.csv_op_column] && (*op == 'W' || *op == 'w' || *op == '1')) {
      return Status::Ok();
    }
  }
  if (options_.csv_size_column < 0) {  // the column is a key
    *out = KeyRun{offset, 1};
    *got = true;
    return Status::Ok();
  }
  if (size == 0) return Status::Ok();
  const uint64_t page = options_.page_bytes;
  const uint64_t first_page = offset / page;
  const uint64_t last_page = (offset + size - 1) / page;
  *out = KeyRun{first_page, last_page - first_page + 1};
  *got = true;
  return Status::Ok();
}

}  // namespace arcstore::sim
