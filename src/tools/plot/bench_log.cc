#include "tools/plot/bench_log.h"

#include <charconv>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "tools/plot/trace_file.h"

namespace arcstore::tools {
namespace {

namespace fs = std::filesystem;

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    size_t comma = line.find(',', start);
    std::string_view f =
        line.substr(start, comma == std::string_view::npos ? comma : comma - start);
    while (!f.empty() && (f.front() == ' ' || f.front() == '\t')) f.remove_prefix(1);
    while (!f.empty() && (f.back() == ' ' || f.back() == '\t' || f.back() == '\r'))
      f.remove_suffix(1);
    out.push_back(f);
    if (comma == std::string_view::npos || out.size() > 16) break;
    start = comma + 1;
  }
  return out;
}

template <typename T>
bool ParseNum(std::string_view s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Calls `fn(line_no, line)` for each line that is not empty or a comment.
template <typename Fn>
Status EachLine(std::string_view text, Fn fn) {
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    line_no++;
    if (line.empty() || line[0] == '#' || line == "\r") continue;
    ARC_RETURN_IF_ERROR(fn(line_no, line));
  }
  return Status::Ok();
}

const char* const kKinds[] = {"bw", "iops", "lat", "clat", "slat", "txg", "stalls"};

}  // namespace

Result<std::vector<FioLogRow>> ParseFioLog(std::string_view text, const std::string& name) {
  std::vector<FioLogRow> rows;
  ARC_RETURN_IF_ERROR(EachLine(text, [&](size_t n, std::string_view line) -> Status {
    auto f = Fields(line);
    auto bad = [&](const std::string& what) {
      return Status::InvalidArgument(name + ":" + std::to_string(n) + ": " + what);
    };
    if (f.size() < 4 || f.size() > 6) {
      return bad("expected 'time, value, direction, block size[, offset][, priority]'");
    }
    FioLogRow r;
    if (!ParseNum(f[0], &r.time_ms)) return bad("time '" + std::string(f[0]) + "' is not a number");
    if (!ParseNum(f[1], &r.value)) return bad("value '" + std::string(f[1]) + "' is not a number");
    if (!ParseNum(f[2], &r.dir) || r.dir < 0 || r.dir > 2)
      return bad("direction must be 0, 1 or 2");
    if (!ParseNum(f[3], &r.block_bytes))
      return bad("block size '" + std::string(f[3]) + "' is not a number");
    rows.push_back(r);
    return Status::Ok();
  }));
  return rows;
}

Result<std::vector<TxgMark>> ParseTxgLog(std::string_view text, const std::string& name) {
  std::vector<TxgMark> marks;
  ARC_RETURN_IF_ERROR(EachLine(text, [&](size_t n, std::string_view line) -> Status {
    auto f = Fields(line);
    auto bad = [&](const std::string& what) {
      return Status::InvalidArgument(name + ":" + std::to_string(n) + ": " + what);
    };
    if (f.size() != 7)
      return bad("expected 7 fields: quiesce_ms, sync_start_ms, sync_end_ms, txg, reason, ...");
    TxgMark m;
    if (!ParseNum(f[0], &m.quiesce_ms) || !ParseNum(f[1], &m.sync_start_ms) ||
        !ParseNum(f[2], &m.sync_end_ms) || !ParseNum(f[3], &m.txg)) {
      return bad("times and txg must be integers");
    }
    if (m.quiesce_ms > m.sync_start_ms || m.sync_start_ms > m.sync_end_ms) {
      return bad("want quiesce <= sync start <= sync end");
    }
    m.reason = std::string(f[4]);
    marks.push_back(std::move(m));
    return Status::Ok();
  }));
  return marks;
}

Result<std::vector<StallMark>> ParseStallLog(std::string_view text, const std::string& name) {
  std::vector<StallMark> marks;
  ARC_RETURN_IF_ERROR(EachLine(text, [&](size_t n, std::string_view line) -> Status {
    auto f = Fields(line);
    StallMark m;
    if (f.size() != 2 || !ParseNum(f[0], &m.start_us) || !ParseNum(f[1], &m.duration_us)) {
      return Status::InvalidArgument(name + ":" + std::to_string(n) +
                                     ": expected 'start_us, duration_us', two integers");
    }
    marks.push_back(m);
    return Status::Ok();
  }));
  return marks;
}

Result<BenchRun> LoadBenchRun(const std::string& input, std::optional<uint32_t> job) {
  static const std::regex kFile(R"((.*)_(bw|iops|lat|clat|slat|txg|stalls)(\.[0-9]+)?\.log)");
  std::string prefix, suffix;
  std::smatch m;
  std::error_code ec;
  if (fs::is_regular_file(input, ec) && std::regex_match(input, m, kFile)) {
    prefix = m[1];
    suffix = m[3];
  } else {
    // A prefix: the job numbers of the files that exist for it.
    prefix = input;
    fs::path p(input);
    fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    const std::string base = p.filename().string();
    std::set<std::string> suffixes;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      std::smatch fm;
      if (f.rfind(base + "_", 0) != 0 || !std::regex_match(f, fm, kFile) || fm[1] != base) continue;
      suffixes.insert(fm[3]);
    }
    if (ec) return Status::NotFound(input + ": cannot list " + dir.string() + ": " + ec.message());
    if (job) {
      suffix = "." + std::to_string(*job);
      if (suffixes.count(suffix) == 0) {
        return Status::NotFound(input + ": no log files of job " + std::to_string(*job));
      }
    } else if (suffixes.size() == 1) {
      suffix = *suffixes.begin();
    } else if (suffixes.empty()) {
      return Status::NotFound(input +
                              ": no PREFIX_bw/iops/lat/clat/txg log files with this prefix");
    } else {
      std::string list;
      for (const auto& s : suffixes)
        list += (list.empty() ? "" : ", ") + (s.empty() ? "(none)" : s.substr(1));
      return Status::InvalidArgument(input + ": logs of several jobs (" + list +
                                     "); choose one with --job N");
    }
  }
  BenchRun run;
  run.name = prefix + suffix;
  for (const char* kind : kKinds) {
    const std::string path = prefix + "_" + kind + suffix + ".log";
    if (!fs::is_regular_file(path, ec)) continue;
    const std::string k = kind;
    if (k == "slat" || (k == "clat" && run.has_lat)) continue;
    ARC_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, kMaxBenchLogBytes));
    run.files.push_back(path);
    if (k == "stalls") {
      ARC_ASSIGN_OR_RETURN(run.stalls, ParseStallLog(text, path));
      run.has_stalls = true;
      continue;
    }
    if (k == "txg") {
      ARC_ASSIGN_OR_RETURN(run.txgs, ParseTxgLog(text, path));
      run.has_txg = true;
      continue;
    }
    ARC_ASSIGN_OR_RETURN(std::vector<FioLogRow> rows, ParseFioLog(text, path));
    if (k == "bw") {
      run.bw = std::move(rows);
      run.has_bw = true;
    } else if (k == "iops") {
      run.iops = std::move(rows);
      run.has_iops = true;
    } else {
      run.lat = std::move(rows);
      run.has_lat = true;
      run.lat_kind = k;
    }
  }
  if (!run.has_bw && !run.has_iops && !run.has_lat) {
    return Status::NotFound(input + ": no bw, iops or lat log for " + run.name);
  }
  return run;
}

}  // namespace arcstore::tools
