#include "bench/fio_values.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace arcstore::bench {
namespace {

struct Unit {
  const char* name;
  int power;      // multiplier = base^power
  bool iec;       // "kib" style: the other base
};

// Longest names first so that "kib" wins over "k".
constexpr Unit kSizeUnits[] = {
    {"pib", 5, true}, {"tib", 4, true}, {"gib", 3, true}, {"mib", 2, true}, {"kib", 1, true},
    {"pb", 5, false}, {"tb", 4, false}, {"gb", 3, false}, {"mb", 2, false}, {"kb", 1, false},
    {"p", 5, false},  {"t", 4, false},  {"g", 3, false},  {"m", 2, false},  {"k", 1, false},
    {"b", 0, false},
};

Status Bad(std::string_view what, std::string_view text, std::string_view why) {
  return Status::InvalidArgument(std::string(what) + " '" + std::string(text) + "': " +
                                 std::string(why));
}

// Parses the leading integer (decimal or 0x hex) and returns the rest.
Result<uint64_t> LeadingInteger(std::string_view t, std::string_view* rest, std::string_view what) {
  std::string s(t);
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])))) {
    return Bad(what, t, "does not start with a number");
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (errno == ERANGE || v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Bad(what, t, "is too large");
  }
  *rest = t.substr(static_cast<size_t>(end - s.c_str()));
  return static_cast<uint64_t>(v);
}

Result<uint64_t> MulChecked(uint64_t v, uint64_t mult, std::string_view what, std::string_view t) {
  if (mult != 0 && v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / mult) {
    return Bad(what, t, "is too large");
  }
  return v * mult;
}

}  // namespace

const char* DirName(Dir dir) {
  switch (dir) {
    case kRead: return "read";
    case kWrite: return "write";
    case kTrim: return "trim";
  }
  return "?";
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

uint64_t SizeValue::Resolve(uint64_t whole_bytes) const {
  if (!percent) return bytes;
  return static_cast<uint64_t>(static_cast<long double>(whole_bytes) * percent_value / 100.0L);
}

Result<uint64_t> ParseFioSize(std::string_view text, uint32_t kb_base) {
  ARC_ASSIGN_OR_RETURN(SizeValue v, ParseFioSizeOrPercent(text, kb_base));
  if (v.percent) return Bad("size", text, "a percentage is not allowed here");
  return v.bytes;
}

Result<SizeValue> ParseFioSizeOrPercent(std::string_view text, uint32_t kb_base) {
  if (kb_base != 1000 && kb_base != 1024) {
    return Status::InvalidArgument("kb_base must be 1000 or 1024, not " + std::to_string(kb_base));
  }
  std::string_view t = TrimSpace(text);
  std::string_view rest;
  ARC_ASSIGN_OR_RETURN(uint64_t v, LeadingInteger(t, &rest, "size"));
  std::string unit = Lowercase(TrimSpace(rest));
  SizeValue out;
  if (unit == "%") {
    if (v > 100) return Bad("size", text, "a percentage above 100");
    out.percent = true;
    out.percent_value = static_cast<double>(v);
    return out;
  }
  if (!unit.empty() && unit[0] == '.') {
    return Bad("size", text, "fio reads only the integer part of a size; write it in a smaller unit");
  }
  if (unit.empty()) {
    out.bytes = v;
    return out;
  }
  for (const Unit& u : kSizeUnits) {
    if (unit != u.name) continue;
    uint64_t base = kb_base;
    if (u.iec) base = kb_base == 1024 ? 1000 : 1024;
    uint64_t mult = 1;
    for (int i = 0; i < u.power; i++) mult *= base;
    ARC_ASSIGN_OR_RETURN(out.bytes, MulChecked(v, mult, "size", text));
    return out;
  }
  return Bad("size", text, "unknown unit '" + unit + "'");
}

Result<uint64_t> ParseFioTimeNs(std::string_view text, TimeUnit bare_unit) {
  std::string_view t = TrimSpace(text);
  std::string_view rest;
  ARC_ASSIGN_OR_RETURN(uint64_t v, LeadingInteger(t, &rest, "time"));
  std::string unit = Lowercase(TrimSpace(rest));
  uint64_t mult = 0;
  if (unit.empty()) {
    constexpr uint64_t kBare[] = {1, 1000, 1000000, 1000000000};
    mult = kBare[static_cast<int>(bare_unit)];
  } else if (unit == "ns" || unit == "nsec") {
    mult = 1;
  } else if (unit == "us" || unit == "usec") {
    mult = 1000;
  } else if (unit == "ms" || unit == "msec") {
    mult = 1000000;
  } else if (unit == "s" || unit == "sec") {
    mult = 1000000000ull;
  } else if (unit == "m" || unit == "min") {
    mult = 60ull * 1000000000ull;
  } else if (unit == "h" || unit == "hr" || unit == "hour") {
    mult = 3600ull * 1000000000ull;
  } else if (unit == "d" || unit == "day") {
    mult = 86400ull * 1000000000ull;
  } else {
    return Bad("time", text, "unknown unit '" + unit + "'");
  }
  return MulChecked(v, mult, "time", text);
}

Result<bool> ParseFioBool(std::string_view text) {
  std::string t = Lowercase(TrimSpace(text));
  if (t.empty() || t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  return Bad("boolean", text, "expected 0 or 1");
}

Result<int64_t> ParseFioInt(std::string_view text) {
  std::string_view t = TrimSpace(text);
  bool neg = !t.empty() && t[0] == '-';
  if (neg) t.remove_prefix(1);
  std::string_view rest;
  ARC_ASSIGN_OR_RETURN(uint64_t v, LeadingInteger(t, &rest, "integer"));
  if (!TrimSpace(rest).empty()) return Bad("integer", text, "trailing characters");
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

Result<double> ParseFioDouble(std::string_view text) {
  std::string s(TrimSpace(text));
  if (s.empty()) return Bad("number", text, "empty");
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) {
    return Bad("number", text, "not a number");
  }
  return v;
}

std::array<std::string, kNumDirs> SplitPerDirection(std::string_view text) {
  std::array<std::string, kNumDirs> out;
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    fields.emplace_back(TrimSpace(text.substr(start, comma == std::string_view::npos
                                                         ? std::string_view::npos
                                                         : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  for (int d = 0; d < kNumDirs; d++) {
    if (d < static_cast<int>(fields.size())) {
      out[d] = fields[d];
    } else {
      out[d] = fields.back();
    }
  }
  return out;
}

Result<BsSplit> ParseBsSplitList(std::string_view text, uint32_t kb_base) {
  BsSplit split;
  uint32_t given = 0;
  int blanks = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t colon = text.find(':', start);
    std::string_view item =
        TrimSpace(text.substr(start, colon == std::string_view::npos ? std::string_view::npos
                                                                     : colon - start));
    if (item.empty()) return Bad("bssplit", text, "an empty entry");
    size_t slash = item.find('/');
    BsSplitEntry e;
    ARC_ASSIGN_OR_RETURN(e.bs_bytes, ParseFioSize(item.substr(0, slash), kb_base));
    if (e.bs_bytes == 0) return Bad("bssplit", text, "a zero block size");
    std::string_view pct = slash == std::string_view::npos ? "" : TrimSpace(item.substr(slash + 1));
    if (pct.empty()) {
      blanks++;
      e.percent = 0;
    } else {
      ARC_ASSIGN_OR_RETURN(int64_t p, ParseFioInt(pct));
      if (p < 0 || p > 100) return Bad("bssplit", text, "a percentage outside 0..100");
      e.percent = static_cast<uint32_t>(p);
      given += e.percent;
    }
    split.push_back(e);
    if (split.size() > 64) return Bad("bssplit", text, "more than 64 entries");
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (given > 100) return Bad("bssplit", text, "percentages add up to more than 100");
  if (blanks > 0) {
    uint32_t share = (100 - given) / static_cast<uint32_t>(blanks);
    uint32_t extra = (100 - given) % static_cast<uint32_t>(blanks);
    for (auto& e : split) {
      if (e.percent == 0 && share + extra > 0) {
        e.percent = share + extra;
        extra = 0;
      }
    }
  } else if (given != 100) {
    return Bad("bssplit", text, "percentages add up to " + std::to_string(given) + ", not 100");
  }
  return split;
}

Result<BsRange> ParseBsRangeOne(std::string_view text, uint32_t kb_base) {
  size_t dash = text.find('-');
  if (dash == std::string_view::npos) return Bad("bsrange", text, "expected MIN-MAX");
  BsRange r;
  ARC_ASSIGN_OR_RETURN(r.min_bytes, ParseFioSize(text.substr(0, dash), kb_base));
  ARC_ASSIGN_OR_RETURN(r.max_bytes, ParseFioSize(text.substr(dash + 1), kb_base));
  if (r.min_bytes == 0 || r.min_bytes > r.max_bytes) {
    return Bad("bsrange", text, "needs 0 < MIN <= MAX");
  }
  return r;
}

Result<std::vector<double>> ParsePercentileList(std::string_view text) {
  std::vector<double> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t colon = text.find(':', start);
    std::string_view item =
        text.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
    ARC_ASSIGN_OR_RETURN(double p, ParseFioDouble(item));
    if (!(p > 0 && p <= 100)) return Bad("percentile_list", text, "each value must be in (0, 100]");
    out.push_back(p);
    if (out.size() > 20) return Bad("percentile_list", text, "more than 20 values");
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return out;
}

}  // namespace arcstore::bench
