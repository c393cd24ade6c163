// Line-oriented readers: Linux kstat, illumos kstat (-m and -p), FreeBSD
// sysctl and bare name/value excerpts. See arcstats_reader.h.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/doctor/arcstats_reader.h"

namespace arcstore::doctor {
namespace {

constexpr size_t kMaxLineBytes = 4096;
constexpr size_t kMaxQuotedLines = 5;
constexpr std::string_view kSysctlPrefix = "kstat.zfs.misc.arcstats.";

std::vector<std::string_view> Tokens(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size() && out.size() < 16) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) i++;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') j++;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

bool IsStatName(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Headerless "name value" lines are taken only for names of the arcstats
// family (or arcstore's additions), so that prose and job files pasted around
// a dump ("runtime 60") are not read as statistics.
bool LooksLikeArcstatName(std::string_view s) {
  static constexpr std::string_view kPrefixes[] = {
      "anon_",   "mru_",   "mfu_",    "uncached_", "l2_",         "arc_",      "demand_",
      "prefetch_", "evict_", "hash_", "memory_",  "abd_",        "held_bytes_", "txg_syncs_",
      "rmw_",    "disk_",  "dnode_",  "dbuf_",     "compressed_", "uncompressed_"};
  static constexpr std::string_view kNames[] = {
      "hits",       "iohits",      "misses",      "deleted",       "mutex_miss",
      "access_skip", "p",          "pd",          "pm",            "c",
      "c_min",      "c_max",       "size",        "meta",          "overhead_size",
      "hdr_size",   "data_size",   "metadata_size", "bonus_size",  "other_size",
      "crtime",     "snaptime",    "async_upgrade_sync", "predictive_prefetch",
      "prescient_prefetch", "cached_only_in_progress", "dnode_size", "dbuf_size"};
  for (auto p : kPrefixes)
    if (s.substr(0, p.size()) == p) return true;
  for (auto n : kNames)
    if (s == n) return true;
  return false;
}

bool IsUpperSection(std::string_view s) {
  return std::all_of(s.begin(), s.end() - 1, [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ' ';
  });
}

bool IsUnsigned(std::string_view s) {
  return !s.empty() && s.size() <= 20 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsHeaderNumber(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    return std::all_of(s.begin() + 2, s.end(), [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    });
  }
  return IsUnsigned(s);
}

class LineReader {
 public:
  StatsView Read(std::string_view text);

 private:
  enum class Verdict { kUsed, kSkipped, kNotUnderstood, kStop };
  Verdict Line(std::string_view line, size_t line_no);
  Verdict Value(StatsFormat f, std::string_view name, std::string_view value, size_t line_no);
  void Tally(StatsFormat f) { counts_[static_cast<size_t>(f)]++; }

  StatsView view_;
  std::array<size_t, 9> counts_{};
  bool stats_seen_ = false;
  bool illumos_header_ = false;
  bool linux_header_ = false;
  size_t not_understood_ = 0;
};

LineReader::Verdict LineReader::Value(StatsFormat f, std::string_view name,
                                      std::string_view value, size_t line_no) {
  if (!IsStatName(name)) return Verdict::kNotUnderstood;
  std::string n(name);
  bool neg = !value.empty() && value[0] == '-';
  std::string_view digits = neg ? value.substr(1) : value;
  if (IsUnsigned(digits)) {
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u);
    if (ec != std::errc()) {
      view_.notes.push_back("line " + std::to_string(line_no) + ": " + n +
                            " does not fit in 64 bits; ignored");
      return Verdict::kNotUnderstood;
    }
    if (u > static_cast<uint64_t>(INT64_MAX) && !neg) {
      view_.notes.push_back(n + " = " + std::string(value) +
                            " is above 2^63-1: kept as the wrapped value " +
                            std::to_string(static_cast<int64_t>(u)) +
                            " (a counter that went below zero)");
    } else if (neg && u > static_cast<uint64_t>(INT64_MAX)) {
      return Verdict::kNotUnderstood;
    }
    int64_t v = neg ? -static_cast<int64_t>(u) : static_cast<int64_t>(u);
    view_.Set(n, v);
  } else if ((n == "crtime" || n == "snaptime") && !neg && digits.size() < 32) {
    // illumos prints seconds with a fraction; keep nanoseconds.
    double sec = 0;
    std::string copy(digits);
    if (std::sscanf(copy.c_str(), "%lf", &sec) != 1 || !(sec >= 0) || sec > 9e9)
      return Verdict::kNotUnderstood;
    view_.Set(n, static_cast<int64_t>(std::llround(sec * 1e9)));
  } else {
    return Verdict::kNotUnderstood;
  }
  stats_seen_ = true;
  Tally(f);
  return Verdict::kUsed;
}

LineReader::Verdict LineReader::Line(std::string_view line, size_t line_no) {
  auto t = Tokens(line);
  if (t.empty()) return Verdict::kSkipped;
  if (t[0] == "module:" || (t.size() == 3 && t[0] == "name" && t[1] == "type" && t[2] == "data")) {
    if (stats_seen_ && (illumos_header_ || linux_header_)) {
      view_.notes.push_back("line " + std::to_string(line_no) +
                            ": a second dump begins here; only the first is read");
      return Verdict::kStop;
    }
    if (stats_seen_) {  // loose lines before the real dump: the dump wins
      view_.notes.push_back(std::to_string(view_.values.size()) + " values before line " +
                            std::to_string(line_no) +
                            " dropped: a dump with a header begins there");
      view_.values.clear();
      view_.approximate.clear();
      counts_.fill(0);
      stats_seen_ = false;
    }
    (t[0] == "module:" ? illumos_header_ : linux_header_) = true;
    return Verdict::kSkipped;
  }
  if (t[0] == "name:") return Verdict::kSkipped;  // illumos "name: arcstats class: misc"
  if (t.size() == 1 && t[0].size() > 1 && t[0].back() == ':' && IsUpperSection(t[0])) {
    // arc_summary -r: "ARCSTATS:", then other kstats ("ZFETCHSTATS:") whose
    // names (hits, misses) collide with the ARC's.
    if (t[0] == "ARCSTATS:") {
      linux_header_ = true;
      return Verdict::kSkipped;
    }
    if (!stats_seen_) return Verdict::kSkipped;
    view_.notes.push_back("line " + std::to_string(line_no) + ": section " + std::string(t[0]) +
                          " is not arcstats; reading stops here");
    return Verdict::kStop;
  }
  if (!stats_seen_ && t.size() >= 5 && t.size() <= 8 &&
      std::all_of(t.begin(), t.end(), IsHeaderNumber)) {
    // Linux "kid type flags ndata data_size crtime snaptime": times in ns.
    linux_header_ = true;
    if (t.size() >= 7 && IsUnsigned(t[5]) && IsUnsigned(t[6])) {
      Value(StatsFormat::kLinuxKstat, "crtime", t[5], line_no);
      Value(StatsFormat::kLinuxKstat, "snaptime", t[6], line_no);
      stats_seen_ = false;
    }
    return Verdict::kSkipped;
  }
  if (t.size() == 1 || t.size() == 2) {
    std::string_view key = t[0], value = t.size() == 2 ? t[1] : std::string_view();
    if (t.size() == 1) {  // "kstat.zfs.misc.arcstats.size=12"
      size_t eq = key.find('=');
      if (eq == std::string_view::npos || key.substr(0, kSysctlPrefix.size()) != kSysctlPrefix)
        return Verdict::kNotUnderstood;
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    }
    if (key.substr(0, kSysctlPrefix.size()) == kSysctlPrefix) {
      key.remove_prefix(kSysctlPrefix.size());
      if (!key.empty() && key.back() == ':') key.remove_suffix(1);
      return Value(StatsFormat::kFreeBsdSysctl, key, value, line_no);
    }
    size_t colon = key.rfind(':');
    if (colon != std::string_view::npos && colon + 1 < key.size()) {
      std::string_view prefix = key.substr(0, colon);
      if (prefix.size() < 8 || prefix.substr(prefix.size() - 8) != "arcstats")
        return Verdict::kNotUnderstood;
      return Value(StatsFormat::kIllumosKstatP, key.substr(colon + 1), value, line_no);
    }
    if (!illumos_header_ && !LooksLikeArcstatName(key)) return Verdict::kNotUnderstood;
    return Value(illumos_header_ ? StatsFormat::kIllumosKstat : StatsFormat::kNameValue, key,
                 value, line_no);
  }
  if (t.size() == 3 && t[1].size() == 1 && t[1][0] >= '0' && t[1][0] <= '9' &&
      (linux_header_ || LooksLikeArcstatName(t[0])))
    return Value(StatsFormat::kLinuxKstat, t[0], t[2], line_no);
  return Verdict::kNotUnderstood;
}

StatsView LineReader::Read(std::string_view text) {
  size_t start = 0, line_no = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    line_no++;
    Verdict v = line.size() > kMaxLineBytes ? Verdict::kNotUnderstood : Line(line, line_no);
    if (v == Verdict::kStop) break;
    if (v != Verdict::kNotUnderstood) continue;
    bool prompt = line.find(" # ") != std::string_view::npos || line.substr(0, 2) == "$ " ||
                  line.substr(0, 2) == "# ";
    if (prompt) continue;  // a shell prompt and command, pasted with the output
    if (++not_understood_ <= kMaxQuotedLines) {
      std::string quoted(line.substr(0, 80));
      view_.notes.push_back("line " + std::to_string(line_no) + " not understood: '" + quoted +
                            "'");
    }
  }
  if (not_understood_ > kMaxQuotedLines)
    view_.notes.push_back(std::to_string(not_understood_ - kMaxQuotedLines) +
                          " more lines not understood");
  size_t best = 0;
  for (size_t i = 1; i < counts_.size(); i++)
    if (counts_[i] > counts_[best]) best = i;
  view_.format = static_cast<StatsFormat>(best);
  if (view_.format == StatsFormat::kNameValue && illumos_header_)
    view_.format = StatsFormat::kIllumosKstat;
  return std::move(view_);
}

bool ContainsNoCase(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

}  // namespace

StatsView ReadKstatLines(std::string_view text) { return LineReader().Read(text); }

bool LooksLikeArcSummary(std::string_view text) {
  return ContainsNoCase(text, "ZFS Subsystem Report") || ContainsNoCase(text, "ARC Summary") ||
         ContainsNoCase(text, "ARC size (current):") || ContainsNoCase(text, "ARC Size:") ||
         ContainsNoCase(text, "Target size (adaptive):");
}

Result<StatsView> ReadArcStats(std::string_view text) {
  if (text.size() > kMaxArcStatsInputBytes)
    return Status::InvalidArgument("input is " + std::to_string(text.size()) +
                                   " bytes; the limit is " +
                                   std::to_string(kMaxArcStatsInputBytes));
  StatsView view = LooksLikeArcSummary(text) ? ReadArcSummary(text) : ReadKstatLines(text);
  if (view.values.empty()) {
    std::string why = "no ARC statistics found in the input";
    if (!view.notes.empty()) why += " (" + view.notes.front() + ")";
    return Status::InvalidArgument(why);
  }
  DecideFieldSet(view);
  return view;
}

}  // namespace arcstore::doctor
