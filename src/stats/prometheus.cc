#include "stats/prometheus.h"

#include <cstdio>

namespace arcstore::stats {

namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string Sanitize(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) c = '_';
  }
  return out;
}

std::string EscapeHelp(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

bool InSeconds(const StatInfo& info) { return info.unit == Unit::kNanoseconds; }

// Nanoseconds as exact decimal seconds: 1500 -> "0.0000015".
std::string Seconds(uint64_t ns, bool negative = false) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%llu.%09llu", negative ? "-" : "",
                static_cast<unsigned long long>(ns / 1000000000),
                static_cast<unsigned long long>(ns % 1000000000));
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string Value(const StatInfo& info, uint64_t raw) {
  return InSeconds(info) ? Seconds(raw) : std::to_string(raw);
}

std::string Value(const StatInfo& info, int64_t raw) {
  if (!InSeconds(info)) return std::to_string(raw);
  uint64_t magnitude = raw < 0 ? 0 - static_cast<uint64_t>(raw) : static_cast<uint64_t>(raw);
  return Seconds(magnitude, raw < 0);
}

void Header(std::string* out, const std::string& name, const StatInfo& info, const char* type) {
  std::string help = info.help.empty() ? info.FullName() : info.help;
  *out += "# HELP " + name + " " + EscapeHelp(help) + "\n";
  *out += "# TYPE " + name + " " + type + "\n";
}

void WriteHistogram(std::string* out, const std::string& name, const StatInfo& info,
               const HistogramData& h) {
  Header(out, name, info, "histogram");
  int last = 0;
  for (int i = 0; i < HistogramData::kBuckets; i++) {
    if (h.buckets[i] != 0) last = i;
  }
  uint64_t cumulative = 0;
  for (int i = 0; i <= last && i < HistogramData::kBuckets - 1; i++) {
    cumulative += h.buckets[i];
    // Bucket i holds integers below 2^i (bucket 0 holds only 0).
    uint64_t bound = i == 0 ? 0 : (uint64_t{1} << i);
    std::string le = Value(info, bound);
    *out += name + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  *out += name + "_bucket{le=\"+Inf\"} " + std::to_string(h.count) + "\n";
  *out += name + "_sum " + Value(info, h.sum) + "\n";
  *out += name + "_count " + std::to_string(h.count) + "\n";
}

}  // namespace

std::string PrometheusBaseName(const StatInfo& info) {
  std::string name = "arcstore_" + Sanitize(info.module) + "_" + Sanitize(info.name);
  if (info.kind == Kind::kCounter && EndsWith(name, "_total")) name.resize(name.size() - 6);
  if (info.unit == Unit::kNanoseconds) {
    if (EndsWith(name, "_ns")) name.resize(name.size() - 3);
    name += "_seconds";
  } else if (info.unit == Unit::kBytes && !EndsWith(name, "_bytes")) {
    name += "_bytes";
  }
  return name;
}

std::string ToPrometheusText(const Snapshot& snapshot) {
  std::string out;
  for (const StatValue& v : snapshot.values) {
    std::string name = PrometheusBaseName(v.info);
    switch (v.info.kind) {
      case Kind::kCounter:
        Header(&out, name + "_total", v.info, "counter");
        out += name + "_total " + Value(v.info, v.counter) + "\n";
        break;
      case Kind::kGauge:
        Header(&out, name, v.info, "gauge");
        out += name + " " + Value(v.info, v.gauge) + "\n";
        break;
      case Kind::kHistogram:
        WriteHistogram(&out, name, v.info, v.histogram);
        break;
    }
  }
  return out;
}

}  // namespace arcstore::stats
