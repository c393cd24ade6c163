// Parsers for /proc and cgroup memory files. See proc_parsers.h for the
// formats; every error names the file and the 1-based line.
#include "arc/monitor/proc_parsers.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace arcstore::memmon {
namespace {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string_view> SplitFields(std::string_view line, char sep = 0) {
  std::vector<std::string_view> out;
  size_t i = 0;
  auto is_sep = [sep](char c) { return sep ? c == sep : (c == ' ' || c == '\t' || c == '\r'); };
  while (i < line.size()) {
    if (!sep) {
      while (i < line.size() && is_sep(line[i])) i++;
      if (i == line.size()) break;
    }
    size_t j = i;
    while (j < line.size() && !is_sep(line[j])) j++;
    out.push_back(line.substr(i, j - i));
    i = j + 1;
    if (sep && j == line.size()) break;
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' ||
                        s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

Status LineError(std::string_view path, size_t line_no, const std::string& what) {
  return Status::Corruption(std::string(path) + ":" + std::to_string(line_no) + ": " + what);
}

std::optional<uint64_t> ToU64(std::string_view s) {
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "12.34" -> 12.34; rejects signs, exponents and garbage.
std::optional<double> ToPercent(std::string_view s) {
  if (s.empty() || s.size() > 32) return std::nullopt;
  for (char c : s)
    if (!(c == '.' || (c >= '0' && c <= '9'))) return std::nullopt;
  double v = 0;
  std::string copy(s);
  if (std::sscanf(copy.c_str(), "%lf", &v) != 1) return std::nullopt;
  return v;
}

Result<PsiLine> ParsePsiLine(const std::vector<std::string_view>& f, std::string_view path,
                             size_t line_no) {
  PsiLine out;
  bool seen[4] = {false, false, false, false};
  for (size_t i = 1; i < f.size(); i++) {
    size_t eq = f[i].find('=');
    if (eq == std::string_view::npos) return LineError(path, line_no, "expected key=value");
    std::string_view key = f[i].substr(0, eq), value = f[i].substr(eq + 1);
    if (key == "total") {
      auto v = ToU64(value);
      if (!v) return LineError(path, line_no, "bad total '" + std::string(value) + "'");
      out.total_us = *v;
      seen[3] = true;
      continue;
    }
    auto v = ToPercent(value);
    if (!v || *v > 100.0)
      return LineError(path, line_no, "bad percentage '" + std::string(value) + "'");
    if (key == "avg10") out.avg10_pct = *v, seen[0] = true;
    else if (key == "avg60") out.avg60_pct = *v, seen[1] = true;
    else if (key == "avg300") out.avg300_pct = *v, seen[2] = true;
  }
  if (!seen[0]) return LineError(path, line_no, "no avg10= field");
  return out;
}

std::string DecodeOctalEscapes(std::string_view s) {
  auto oct = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 4 <= s.size() &&
        oct(s[i + 1]) && oct(s[i + 2]) && oct(s[i + 3])) {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

}  // namespace

std::string JoinRoot(const std::string& root, std::string_view path) {
  std::string r = root.empty() ? "/" : root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  if (r == "/") return path.empty() || path.front() != '/' ? "/" + std::string(path) : std::string(path);
  return r + (path.empty() || path.front() != '/' ? "/" : "") + std::string(path);
}

Result<std::string> ReadRootedFile(const std::string& root, std::string_view path) {
  std::string full = JoinRoot(root, path);
  std::ifstream in(full, std::ios::binary);
  if (!in) return Status::NotFound(full + ": cannot open");
  std::string text;
  char buf[4096];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxProcFileBytes)
      return Status::Corruption(full + ": larger than " + std::to_string(kMaxProcFileBytes) +
                                " bytes");
  }
  if (in.bad()) return Status::IOError(full + ": read failed");
  return text;
}

Result<Meminfo> ParseMeminfo(std::string_view text, std::string_view path) {
  Meminfo out;
  bool have_total = false;
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); i++) {
    auto f = SplitFields(lines[i]);
    if (f.empty()) continue;
    if (f[0].size() < 2 || f[0].back() != ':')
      return LineError(path, i + 1, "expected 'Name: value [kB]'");
    std::string_view key = f[0].substr(0, f[0].size() - 1);
    if (key != "MemTotal" && key != "MemAvailable" && key != "MemFree" && key != "Cached") continue;
    if (f.size() < 2 || f.size() > 3) return LineError(path, i + 1, "expected 'Name: value kB'");
    auto v = ToU64(f[1]);
    if (!v) return LineError(path, i + 1, "bad number '" + std::string(f[1]) + "'");
    uint64_t mult = 1;
    if (f.size() == 3) {
      if (f[2] != "kB") return LineError(path, i + 1, "unknown unit '" + std::string(f[2]) + "'");
      mult = 1024;
    }
    if (*v > UINT64_MAX / mult) return LineError(path, i + 1, "value overflows 64 bits");
    uint64_t bytes = *v * mult;
    if (key == "MemTotal") out.total_bytes = bytes, have_total = true;
    else if (key == "MemAvailable") out.available_bytes = bytes;
    else if (key == "MemFree") out.free_bytes = bytes;
    else out.cached_bytes = bytes;
  }
  if (!have_total) return Status::Corruption(std::string(path) + ": no MemTotal line");
  if (out.total_bytes == 0) return Status::Corruption(std::string(path) + ": MemTotal is 0");
  return out;
}

Result<Psi> ParsePsi(std::string_view text, std::string_view path) {
  Psi out;
  bool have_some = false;
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); i++) {
    auto f = SplitFields(lines[i]);
    if (f.empty()) continue;
    if (f[0] != "some" && f[0] != "full")
      return LineError(path, i + 1, "expected 'some' or 'full', got '" + std::string(f[0]) + "'");
    ARC_ASSIGN_OR_RETURN(PsiLine line, ParsePsiLine(f, path, i + 1));
    if (f[0] == "some") out.some = line, have_some = true;
    else out.full = line;
  }
  if (!have_some) return Status::Corruption(std::string(path) + ": no 'some' line");
  return out;
}

Result<std::optional<uint64_t>> ParseLimit(std::string_view text, std::string_view path) {
  std::string_view t = Trim(text);
  if (t == "max") return std::optional<uint64_t>();
  auto v = ToU64(t);
  if (!v)
    return LineError(path, 1, "expected 'max' or a byte count, got '" +
                                  std::string(t.substr(0, 40)) + "'");
  return std::optional<uint64_t>(*v);
}

Result<uint64_t> ParseCounter(std::string_view text, std::string_view path) {
  std::string_view t = Trim(text);
  auto v = ToU64(t);
  if (!v) return LineError(path, 1, "expected a number, got '" + std::string(t.substr(0, 40)) + "'");
  return *v;
}

Result<std::map<std::string, uint64_t>> ParseKeyValues(std::string_view text,
                                                       std::string_view path) {
  std::map<std::string, uint64_t> out;
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); i++) {
    auto f = SplitFields(lines[i]);
    if (f.empty()) continue;
    if (f.size() != 2) return LineError(path, i + 1, "expected 'key value'");
    auto v = ToU64(f[1]);
    if (!v) return LineError(path, i + 1, "bad number '" + std::string(f[1]) + "'");
    if (!out.emplace(std::string(f[0]), *v).second)
      return LineError(path, i + 1, "duplicate key '" + std::string(f[0]) + "'");
  }
  return out;
}

Result<std::vector<ProcCgroupEntry>> ParseProcCgroup(std::string_view text,
                                                     std::string_view path) {
  std::vector<ProcCgroupEntry> out;
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); i++) {
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    size_t c1 = line.find(':');
    size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) return LineError(path, i + 1, "expected 'id:controllers:path'");
    ProcCgroupEntry e;
    e.hierarchy_id = std::string(line.substr(0, c1));
    for (auto c : SplitFields(line.substr(c1 + 1, c2 - c1 - 1), ','))
      if (!c.empty()) e.controllers.emplace_back(c);
    e.path = std::string(line.substr(c2 + 1));
    if (e.path.empty() || e.path.front() != '/')
      return LineError(path, i + 1, "cgroup path must start with '/'");
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<MountEntry>> ParseMountinfo(std::string_view text, std::string_view path) {
  std::vector<MountEntry> out;
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); i++) {
    auto f = SplitFields(lines[i]);
    if (f.empty()) continue;
    size_t dash = 0;
    for (size_t k = 6; k < f.size(); k++)
      if (f[k] == "-") {
        dash = k;
        break;
      }
    if (f.size() < 10 || dash == 0 || dash + 4 > f.size())
      return LineError(path, i + 1, "expected 'id parent dev root mountpoint opts ... - type src superopts'");
    MountEntry m;
    m.root = DecodeOctalEscapes(f[3]);
    m.mount_point = DecodeOctalEscapes(f[4]);
    m.fs_type = std::string(f[dash + 1]);
    for (auto o : SplitFields(f[dash + 3], ',')) m.super_options.emplace_back(o);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace arcstore::memmon
