#include "tools/plot/trace_file.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>

#include "stats/wire.h"

namespace arcstore::tools {

namespace {

constexpr size_t kMaxTraceBytes = size_t{8} << 30;

std::vector<std::string_view> SplitTabs(std::string_view line) {
  std::vector<std::string_view> out;
  while (true) {
    size_t tab = line.find('\t');
    out.push_back(line.substr(0, tab));
    if (tab == std::string_view::npos) break;
    line.remove_prefix(tab + 1);
  }
  return out;
}

Status Bad(size_t line_no, std::string_view what) {
  return Status::InvalidArgument("trace line " + std::to_string(line_no) + ": " + std::string(what));
}

bool U64(std::string_view s, uint64_t* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty();
}

Status ParseIo(size_t n, const std::vector<std::string_view>& f, Trace* t) {
  if (f.size() != 10) return Bad(n, "an I line has 10 tab-separated fields, this one " + std::to_string(f.size()));
  TraceIo io;
  static constexpr const char* kNames[] = {"", "submit_ns", "issue_ns", "done_ns", "", "", "offset", "bytes", "parts"};
  uint64_t* nums[] = {nullptr, &io.submit_ns, &io.issue_ns, &io.done_ns, nullptr, nullptr, &io.offset, &io.bytes};
  for (int i : {1, 2, 3, 6, 7}) {
    if (!U64(f[static_cast<size_t>(i)], nums[i])) return Bad(n, std::string(kNames[i]) + " is not an unsigned integer");
  }
  uint64_t parts = 0;
  if (!U64(f[8], &parts) || parts == 0 || parts > UINT32_MAX) return Bad(n, "parts is not a count >= 1");
  io.parts = static_cast<uint32_t>(parts);
  if (io.issue_ns < io.submit_ns || io.done_ns < io.issue_ns) {
    return Bad(n, "times must be submit <= issue <= done");
  }
  if (f[4].empty() || f[5].empty()) return Bad(n, "class and op must not be empty");
  io.io_class = std::string(f[4]);
  io.op = std::string(f[5]);
  if (f[9] != "ok" && f[9] != "error") return Bad(n, "the last field must be ok or error");
  io.ok = f[9] == "ok";
  t->ios.push_back(std::move(io));
  return Status::Ok();
}

Status ParseCacheIo(size_t n, const std::vector<std::string_view>& f, Trace* t) {
  if (f.size() != 9) return Bad(n, "a C line has 9 tab-separated fields, this one " + std::to_string(f.size()));
  TraceCacheIo c;
  TraceIo& io = c.io;
  if (!U64(f[1], &io.submit_ns)) return Bad(n, "submit_ns is not an unsigned integer");
  if (!U64(f[2], &io.done_ns)) return Bad(n, "done_ns is not an unsigned integer");
  if (io.done_ns < io.submit_ns) return Bad(n, "times must be submit <= done");
  io.issue_ns = io.submit_ns;
  uint64_t cache = 0;
  if (!U64(f[3], &cache) || cache > UINT32_MAX) return Bad(n, "cache is not a device number");
  c.cache = static_cast<uint32_t>(cache);
  if (f[4].empty() || f[5].empty()) return Bad(n, "class and op must not be empty");
  io.io_class = std::string(f[4]);
  io.op = std::string(f[5]);
  if (!U64(f[6], &io.offset)) return Bad(n, "offset is not an unsigned integer");
  if (!U64(f[7], &io.bytes)) return Bad(n, "bytes is not an unsigned integer");
  if (f[8] != "ok" && f[8] != "error") return Bad(n, "the last field must be ok or error");
  io.ok = f[8] == "ok";
  t->cache_ios.push_back(std::move(c));
  return Status::Ok();
}

Status ParseWrite(size_t n, const std::vector<std::string_view>& f, Trace* t) {
  if (f.size() != 12) return Bad(n, "a W line has 12 tab-separated fields, this one " + std::to_string(f.size()));
  TraceWrite w;
  if (!U64(f[1], &w.start_ns)) return Bad(n, "start_ns is not an unsigned integer");
  if (!U64(f[2], &w.done_ns)) return Bad(n, "done_ns is not an unsigned integer");
  if (w.done_ns < w.start_ns) return Bad(n, "times must be start <= done");
  if (f[3] != "write" && f[3] != "trim" && f[3] != "zero") return Bad(n, "op must be write, trim or zero");
  w.op = std::string(f[3]);
  if (!U64(f[4], &w.offset)) return Bad(n, "offset is not an unsigned integer");
  if (!U64(f[5], &w.bytes)) return Bad(n, "bytes is not an unsigned integer");
  for (int i = 0; i < kTraceWaitPlaces; i++) {
    if (!U64(f[6 + static_cast<size_t>(i)], &w.wait_ns[i])) {
      return Bad(n, std::string(kWaitPlaces[i]) + "_ns is not an unsigned integer");
    }
  }
  if (f[11] != "ok" && f[11] != "error") return Bad(n, "the last field must be ok or error");
  w.ok = f[11] == "ok";
  t->writes.push_back(std::move(w));
  return Status::Ok();
}

Status ParseMark(size_t n, const std::vector<std::string_view>& f, Trace* t,
                 std::map<uint64_t, size_t>* open_syncs) {
  if (f.size() != 4) return Bad(n, "a T line has 4 tab-separated fields");
  uint64_t ns = 0, txg = 0;
  if (!U64(f[1], &ns)) return Bad(n, "ns is not an unsigned integer");
  if (!U64(f[3], &txg)) return Bad(n, "txg is not an unsigned integer");
  if (f[2] == "sync_start") {
    (*open_syncs)[txg] = t->syncs.size();
    t->syncs.push_back({txg, ns, ns});
  } else if (f[2] == "sync_end") {
    auto it = open_syncs->find(txg);
    if (it == open_syncs->end()) {
      // The trace started while this txg was syncing: its start is the trace's.
      t->syncs.push_back({txg, 0, ns});
    } else {
      t->syncs[it->second].end_ns = ns;
      open_syncs->erase(it);
    }
  } else {
    return Bad(n, "marker must be sync_start or sync_end, not '" + std::string(f[2].substr(0, 32)) + "'");
  }
  return Status::Ok();
}

}  // namespace

Result<Trace> ParseTrace(std::string_view text) {
  Trace t;
  std::map<uint64_t, size_t> open_syncs;
  size_t n = 0;
  int version = 3;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (++n > kMaxTraceLines) return Bad(n, "more lines than the limit of 50000000");
    if (n == 1) {
      if (line != kTraceHeader && line != kTraceHeaderV2 && line != kTraceHeaderV1) {
        return Bad(1, "not an arcstore trace (want '# arcstore io trace v3', v2 or v1)");
      }
      version = line == kTraceHeaderV1 ? 1 : line == kTraceHeaderV2 ? 2 : 3;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string_view> f = SplitTabs(line);
    if (f[0] == "I") {
      ARC_RETURN_IF_ERROR(ParseIo(n, f, &t));
    } else if (f[0] == "T") {
      ARC_RETURN_IF_ERROR(ParseMark(n, f, &t, &open_syncs));
    } else if (f[0] == "W" && version >= 2) {
      ARC_RETURN_IF_ERROR(ParseWrite(n, f, &t));
    } else if (f[0] == "C" && version >= 3) {
      ARC_RETURN_IF_ERROR(ParseCacheIo(n, f, &t));
    } else {
      return Bad(n, version == 1   ? "a record starts with I or T"
                    : version == 2 ? "a record starts with I, T or W"
                                   : "a record starts with I, T, W or C");
    }
  }
  if (n == 0) return Bad(1, "empty file");
  return t;
}

Result<std::string> ReadWholeFile(const std::string& path, size_t limit_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > limit_bytes) {
      return Status::InvalidArgument(path + ": larger than the limit of " + std::to_string(limit_bytes) + " bytes");
    }
  }
  if (in.bad()) return Status::IOError(path + ": read failed");
  return text;
}

Result<Trace> ReadTraceFile(const std::string& path) {
  ARC_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, kMaxTraceBytes));
  Result<Trace> t = ParseTrace(text);
  if (!t.ok()) return Status::InvalidArgument(path + ": " + t.status().message());
  return t;
}

Result<std::vector<stats::Snapshot>> ReadSamples(std::string_view text) {
  std::vector<stats::Snapshot> out;
  size_t n = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    n++;
    if (line.empty()) continue;
    Result<stats::Snapshot> s = stats::FromWireJson(line);
    if (!s.ok()) return Status::InvalidArgument("samples line " + std::to_string(n) + ": " + s.status().message());
    out.push_back(std::move(*s));
  }
  if (out.empty()) return Status::InvalidArgument("samples: no snapshot (want arcstore stat --json output)");
  return out;
}

}  // namespace arcstore::tools
