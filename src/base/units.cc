#include "base/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace arcstore {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "1.5GiB" into the number "1.5" and the suffix "gib". Digits and at
// most one '.' make the number; nothing else may precede the suffix.
struct NumberAndSuffix {
  std::string number;
  std::string suffix;
};

Result<NumberAndSuffix> Split(std::string_view text, const char* what) {
  std::string_view t = Trim(text);
  if (t.empty()) return Status::InvalidArgument(std::string("empty ") + what);
  size_t i = 0;
  int dots = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) {
    if (t[i] == '.' && ++dots > 1) break;
    i++;
  }
  if (i == 0 || (i == 1 && t[0] == '.')) {
    return Status::InvalidArgument(std::string(what) + " '" + std::string(text) +
                                   "' does not start with a number");
  }
  return NumberAndSuffix{std::string(t.substr(0, i)), Lower(Trim(t.substr(i)))};
}

// Multiplies a decimal string by `scale` exactly when possible.
Result<uint64_t> Scale(const std::string& number, long double scale, std::string_view text,
                       const char* what) {
  long double v = std::strtold(number.c_str(), nullptr);
  long double scaled = v * scale;
  if (scaled > static_cast<long double>(std::numeric_limits<int64_t>::max())) {
    return Status::OutOfRange(std::string(what) + " '" + std::string(text) + "' is too large");
  }
  long double rounded = std::floor(scaled + 0.5L);
  if (std::fabs(scaled - rounded) > 1e-6L) {
    return Status::InvalidArgument(std::string(what) + " '" + std::string(text) +
                                   "' is not a whole number of units");
  }
  return static_cast<uint64_t>(rounded);
}

}  // namespace

Result<uint64_t> ParseSizeBytes(std::string_view text) {
  ARC_ASSIGN_OR_RETURN(NumberAndSuffix ns, Split(text, "size"));
  const std::string& s = ns.suffix;
  uint64_t mult = 0;
  if (s.empty() || s == "b") {
    mult = 1;
  } else {
    static constexpr struct {
      char letter;
      uint64_t mult;
    } kUnits[] = {{'k', kKiB}, {'m', kMiB}, {'g', kGiB}, {'t', kTiB}, {'p', 1024 * kTiB}};
    for (const auto& u : kUnits) {
      if (s[0] != u.letter) continue;
      std::string_view rest = std::string_view(s).substr(1);
      if (rest.empty() || rest == "b" || rest == "ib") mult = u.mult;
    }
  }
  if (mult == 0) {
    return Status::InvalidArgument("size '" + std::string(text) + "' has unknown unit '" + s +
                                   "' (use B, K, M, G, T or P)");
  }
  return Scale(ns.number, static_cast<long double>(mult), text, "size");
}

Result<uint64_t> ParseDurationNs(std::string_view text, DurationUnit bare_unit) {
  ARC_ASSIGN_OR_RETURN(NumberAndSuffix ns, Split(text, "duration"));
  const std::string& s = ns.suffix;
  long double mult = 0;
  if (s.empty()) {
    switch (bare_unit) {
      case DurationUnit::kNs: mult = 1; break;
      case DurationUnit::kUs: mult = 1e3L; break;
      case DurationUnit::kMs: mult = 1e6L; break;
      case DurationUnit::kSec: mult = 1e9L; break;
    }
  } else if (s == "ns") {
    mult = 1;
  } else if (s == "us" || s == "usec") {
    mult = 1e3L;
  } else if (s == "ms" || s == "msec") {
    mult = 1e6L;
  } else if (s == "s" || s == "sec") {
    mult = 1e9L;
  } else if (s == "m" || s == "min") {
    mult = 60e9L;
  } else if (s == "h") {
    mult = 3600e9L;
  } else {
    return Status::InvalidArgument("duration '" + std::string(text) + "' has unknown unit '" + s +
                                   "' (use ns, us, ms, s, m or h)");
  }
  return Scale(ns.number, mult, text, "duration");
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int i = 0;
  while (v >= 1024.0 && i < 6) {
    v /= 1024.0;
    i++;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, kNames[i]);
  return buf;
}

std::string FormatBytesShort(uint64_t bytes) {
  static const char kNames[] = {' ', 'K', 'M', 'G', 'T', 'P', 'E'};
  if (bytes < 1024) return std::to_string(bytes);
  double v = static_cast<double>(bytes);
  int i = 0;
  while (v >= 1024.0 && i < 6) {
    v /= 1024.0;
    i++;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), v < 10 ? "%.1f%c" : "%.0f%c", v, kNames[i]);
  return buf;
}

std::string FormatDurationNs(uint64_t ns) {
  char buf[32];
  if (ns < 1000) {
    std::snprintf(buf, sizeof(buf), "%lluns", static_cast<unsigned long long>(ns));
  } else if (ns < 1000 * 1000) {
    std::snprintf(buf, sizeof(buf), "%.1fus", static_cast<double>(ns) / 1e3);
  } else if (ns < 1000ULL * 1000 * 1000) {
    std::snprintf(buf, sizeof(buf), "%.2fms", static_cast<double>(ns) / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2fs", static_cast<double>(ns) / 1e9);
  }
  return buf;
}

bool IsPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

}  // namespace arcstore
