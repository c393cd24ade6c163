#include "tools/iostat/iostat.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "tools/stat/arcstat.h"

namespace arcstore::tools {

namespace {

using Value = std::optional<double>;
using Hist = stats::HistogramData;

constexpr std::array<std::string_view, 2> kReadClasses = {"sync_read", "async_read"};
constexpr std::array<std::string_view, 3> kWriteClasses = {"sync_write", "async_write", "log_write"};

std::string Stat(std::string_view cls, std::string_view what) {
  return std::string(cls) + "_" + std::string(what);
}

std::string Pad(std::string_view s, int width) {
  std::string out;
  if (static_cast<int>(s.size()) < width) out.assign(static_cast<size_t>(width) - s.size(), ' ');
  return out + std::string(s);
}

std::string Num(Value v, int scale, int width = 5) {
  return v ? PrettyNumber(*v, width, scale) : Pad("-", width);
}

std::string Time(Value ns, int width = 5) { return Pad(ns ? NiceTimeNs(*ns) : "-", width); }

template <size_t N>
Value Rate(const IostatInterval& i, const std::array<std::string_view, N>& classes, std::string_view what) {
  double total = 0;
  bool any = false;
  for (std::string_view c : classes) {
    const stats::StatValue* v = i.delta->Find("io", Stat(c, what));
    if (v == nullptr) continue;
    any = true;
    total += static_cast<double>(v->counter);
  }
  if (!any) return std::nullopt;
  return total / std::max(i.seconds, 1e-9);
}

template <size_t N>
std::optional<Hist> Merged(const stats::Snapshot& s, const std::array<std::string_view, N>& classes,
                           std::string_view what) {
  Hist h;
  bool any = false;
  for (std::string_view c : classes) {
    const stats::StatValue* v = s.Find("io", Stat(c, what));
    if (v == nullptr || v->info.kind != stats::Kind::kHistogram) continue;
    any = true;
    h.Merge(v->histogram);
  }
  if (!any) return std::nullopt;
  return h;
}

Value Mean(const std::optional<Hist>& h) {
  if (!h || h->count == 0) return std::nullopt;
  return h->Mean();
}

Value Add(Value a, Value b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

Value Gauge(const stats::Snapshot& s, std::string_view module, std::string_view name) {
  const stats::StatValue* v = s.Find(module, name);
  if (v == nullptr) return std::nullopt;
  return static_cast<double>(s.Get(module, name));
}

// zpool iostat's first columns: capacity, operations, bandwidth.
void BasicColumns(const IostatInterval& i, const IostatOptions& o, std::string* head1,
                  std::string* head2, std::string* row) {
  char name[32];
  std::snprintf(name, sizeof(name), "%-10.10s", o.pool_name.c_str());
  *head1 += "              capacity     operations     bandwidth ";
  *head2 += "pool        alloc   free   read  write   read  write";
  *row += std::string(name) + "  " + Num(Gauge(*i.now, "pool", "allocated_bytes"), 1024) + "  " +
          Num(Gauge(*i.now, "pool", "free_bytes"), 1024) + "  " +
          Num(Rate(i, kReadClasses, "ops"), 1000) + "  " + Num(Rate(i, kWriteClasses, "ops"), 1000) +
          "  " + Num(Rate(i, kReadClasses, "bytes"), 1024) + "  " +
          Num(Rate(i, kWriteClasses, "bytes"), 1024);
}

void LatencyColumns(const IostatInterval& i, std::string* head1, std::string* head2, std::string* row) {
  const stats::Snapshot& d = *i.delta;
  auto total = [&](auto classes) {
    return Add(Mean(Merged(d, classes, "queue_ns")), Mean(Merged(d, classes, "latency_ns")));
  };
  std::array<std::string_view, 1> sr = {"sync_read"}, sw = {"sync_write"}, ar = {"async_read"},
                                  aw = {"async_write"};
  *head1 += "   total_wait     disk_wait    syncq_wait    asyncq_wait";
  *head2 += "   read  write   read  write   read  write   read  write";
  for (Value v : {total(kReadClasses), total(kWriteClasses), Mean(Merged(d, kReadClasses, "latency_ns")),
                  Mean(Merged(d, kWriteClasses, "latency_ns")), Mean(Merged(d, sr, "queue_ns")),
                  Mean(Merged(d, sw, "queue_ns")), Mean(Merged(d, ar, "queue_ns")),
                  Mean(Merged(d, aw, "queue_ns"))}) {
    *row += "  " + Time(v);
  }
}

// The "cache" line and one row per cache device, with the pool row's
// columns: alloc/free, ops and bandwidth, and with -l the waits (device
// time only) and with -q dashes (no queue).
std::string CacheRows(const IostatInterval& i, const IostatOptions& o) {
  if (o.cache_devices.empty()) return "";
  auto columns = [&](const std::string& name, const std::vector<std::string>& cells) {
    char label[32];
    std::snprintf(label, sizeof(label), "%-10.10s", name.c_str());
    std::string row = label;
    for (const std::string& c : cells) row += "  " + c;
    return row + "\n";
  };
  const int extra = (o.latency ? 8 : 0) + (o.queues ? 2 * static_cast<int>(kIoClasses.size()) : 0);
  std::vector<std::string> dashes(6 + static_cast<size_t>(extra), Pad("-", 5));
  std::string out = columns("cache", dashes);
  for (const IostatCacheDevice& d : o.cache_devices) {
    const std::string& m = d.stats_module;
    auto rate = [&](std::string_view name) -> Value {
      const stats::StatValue* v = m.empty() ? nullptr : i.delta->Find(m, name);
      if (v == nullptr) return std::nullopt;
      return static_cast<double>(v->counter) / std::max(i.seconds, 1e-9);
    };
    auto mean = [&](std::string_view name) -> Value {
      const stats::StatValue* v = m.empty() ? nullptr : i.delta->Find(m, name);
      if (v == nullptr || v->info.kind != stats::Kind::kHistogram) return std::nullopt;
      return Mean(v->histogram);
    };
    const Value alloc = m.empty() ? std::nullopt : Gauge(*i.now, m, "asize");
    Value free;
    if (alloc && d.size_bytes > 0) free = std::max(0.0, static_cast<double>(d.size_bytes) - *alloc);
    std::vector<std::string> cells = {Num(alloc, 1024),
                                      Num(free, 1024),
                                      Num(rate("device_reads"), 1000),
                                      Num(rate("device_writes"), 1000),
                                      Num(rate("device_read_bytes"), 1024),
                                      Num(rate("device_write_bytes"), 1024)};
    if (o.latency) {
      const Value r = mean("device_read_latency_ns"), w = mean("device_write_latency_ns");
      for (Value v : {r, w, r, w}) cells.push_back(Time(v));
      for (int k = 0; k < 4; k++) cells.push_back(Pad("-", 5));
    }
    if (o.queues) {
      for (size_t k = 0; k < 2 * kIoClasses.size(); k++) cells.push_back(Pad("-", 5));
    }
    out += columns("  " + d.name, cells);
  }
  return out;
}

void QueueColumns(const IostatInterval& i, std::string* head1, std::string* head2, std::string* row) {
  for (std::string_view c : kIoClasses) {
    char h[32];
    std::snprintf(h, sizeof(h), "  %12.12s", std::string(c).c_str());
    *head1 += h;
    *head2 += "   pend  activ";
    *row += "  " + Num(Gauge(*i.now, "io", Stat(c, "queued")), 1000) + "  " +
            Num(Gauge(*i.now, "io", Stat(c, "active")), 1000);
  }
}

// A power of two as zpool iostat -r labels it: 512, 1K, 2K, ... 1M.
std::string SizeLabel(uint64_t v) {
  static constexpr const char* kSuffix[] = {"", "K", "M", "G", "T", "P", "E"};
  int s = 0;
  while (v >= 1024 && v % 1024 == 0 && s < 6) {
    v /= 1024;
    s++;
  }
  return std::to_string(v) + kSuffix[s];
}

// One convention for every histogram table here (latency, size, brw_stats'
// tables): a row is labelled by its bucket's lower bound and holds the I/Os
// from it up to the next row's bound; each table's title says so.
constexpr std::string_view kRowsAreLowerBounds = "rows: from the bound shown up to the next row's";

// A table with one row per log2 bucket that any column uses.
struct HistColumn {
  std::string head;
  std::optional<Hist> hist;
};

std::string HistTable(std::string_view title, std::string_view row_head, bool time_rows,
                      const std::vector<HistColumn>& cols) {
  int first = Hist::kBuckets, last = -1;
  for (const HistColumn& c : cols) {
    if (!c.hist) continue;
    for (int b = 0; b < Hist::kBuckets; b++) {
      if (c.hist->buckets[b] == 0) continue;
      first = std::min(first, b);
      last = std::max(last, b);
    }
  }
  std::string out = std::string(title) + "\n(" + std::string(kRowsAreLowerBounds) + ")\n" +
                    Pad(row_head, 8);
  for (const HistColumn& c : cols) out += "  " + Pad(c.head, 6);
  out += "\n";
  if (last < 0) return out + "(no I/O in this interval)\n";
  for (int b = first; b <= last; b++) {
    // Every table labels a bucket by its lower bound (kRowsAreLowerBounds).
    const uint64_t low = Hist::BucketLow(b);
    out += Pad(time_rows ? NiceTimeNs(static_cast<double>(low)) : SizeLabel(low), 8);
    for (const HistColumn& c : cols) {
      out += "  " + (c.hist ? PrettyNumber(static_cast<double>(c.hist->buckets[b]), 6, 1000) : Pad("-", 6));
    }
    out += "\n";
  }
  return out;
}

// zpool iostat -w without total_wait: the engine histograms queue wait and
// device time separately, not their per-I/O sum.
std::string LatencyHistograms(const IostatInterval& i) {
  const stats::Snapshot& d = *i.delta;
  std::array<std::string_view, 1> sr = {"sync_read"}, sw = {"sync_write"}, ar = {"async_read"},
                                  aw = {"async_write"};
  return HistTable("latency (I/Os per bucket, this interval)", "", true,
                   {{"disk_r", Merged(d, kReadClasses, "latency_ns")},
                    {"disk_w", Merged(d, kWriteClasses, "latency_ns")},
                    {"syncq_r", Merged(d, sr, "queue_ns")},
                    {"syncq_w", Merged(d, sw, "queue_ns")},
                    {"asyncq_r", Merged(d, ar, "queue_ns")},
                    {"asyncq_w", Merged(d, aw, "queue_ns")}});
}

std::string SizeHistograms(const IostatInterval& i) {
  static constexpr std::array<std::string_view, 5> kShort = {"sr", "sw", "ar", "aw", "lw"};
  std::vector<HistColumn> cols;
  for (size_t c = 0; c < kIoClasses.size(); c++) {
    std::array<std::string_view, 1> one = {kIoClasses[c]};
    cols.push_back({std::string(kShort[c]) + "_ind", Merged(*i.delta, one, "size_ind_bytes")});
    cols.push_back({std::string(kShort[c]) + "_agg", Merged(*i.delta, one, "size_agg_bytes")});
  }
  return HistTable("request size (I/Os per bucket; ind = individual, agg = aggregated; "
                   "sr sync_read, sw sync_write, ar async_read, aw async_write, lw log_write)",
                   "size", false, cols);
}

// brw_stats: "ios  %  cum %" per bucket of one histogram.
std::string BrwTable(std::string_view title, std::string_view row_head, bool time_rows,
                     const std::optional<Hist>& h) {
  std::string out = std::string(title) + "\n(" + std::string(kRowsAreLowerBounds) + ")\n" +
                    Pad(row_head, 10) + "      ios   %  cum %\n";
  if (!h) return out + "(not counted by this engine)\n";
  if (h->count == 0) return out + "(no I/O in this interval)\n";
  uint64_t cum = 0;
  for (int b = 0; b < Hist::kBuckets; b++) {
    if (h->buckets[b] == 0 && cum == 0) continue;
    cum += h->buckets[b];
    char buf[96];
    std::string label = time_rows ? NiceTimeNs(static_cast<double>(Hist::BucketLow(b)))
                                   : std::to_string(Hist::BucketLow(b));
    std::snprintf(buf, sizeof(buf), "%9s:  %8llu  %3llu  %5llu\n", label.c_str(),
                  static_cast<unsigned long long>(h->buckets[b]),
                  static_cast<unsigned long long>(h->buckets[b] * 100 / h->count),
                  static_cast<unsigned long long>(cum * 100 / h->count));
    out += buf;
    if (cum == h->count) break;
  }
  return out;
}

}  // namespace

std::string NiceTimeNs(double ns) {
  if (ns < 0.5) return "0";
  static constexpr const char* kUnits[] = {"ns", "us", "ms", "s"};
  int u = 0;
  while (ns >= 1000 && u < 3) {
    ns /= 1000;
    u++;
  }
  char buf[32];
  if (ns < 10 && u > 0 && std::fabs(ns - std::round(ns)) >= 0.05) {
    std::snprintf(buf, sizeof(buf), "%.1f%s", ns, kUnits[u]);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f%s", ns, kUnits[u]);
  }
  return buf;
}

std::string RenderIostat(const IostatInterval& interval, const IostatOptions& options) {
  std::string head1, head2, row;
  BasicColumns(interval, options, &head1, &head2, &row);
  int columns = 6;
  if (options.latency) {
    LatencyColumns(interval, &head1, &head2, &row);
    columns += 8;
  }
  if (options.queues) {
    QueueColumns(interval, &head1, &head2, &row);
    columns += 2 * static_cast<int>(kIoClasses.size());
  }
  std::string out;
  if (options.header) {
    std::string rule = "----------";
    for (int c = 0; c < columns; c++) rule += "  -----";
    out += head1 + "\n" + head2 + "\n" + rule + "\n";
  }
  out += row + "\n";
  out += CacheRows(interval, options);
  if (options.histograms) {
    out += "\n" + LatencyHistograms(interval);
    out += "\n" + BrwTable("I/O time (device latency, all classes)", "time", true,
                           Merged(*interval.delta, kIoClasses, "latency_ns"));
  }
  if (options.sizes) out += "\n" + SizeHistograms(interval);
  if (options.queues) {
    const stats::StatValue* depth = interval.delta->Find("io", "inflight_depth");
    std::optional<Hist> h;
    if (depth != nullptr) h = depth->histogram;
    out += "\n" + BrwTable("disk I/Os in flight (at each submission)", "in flight", false, h);
  }
  return out;
}

}  // namespace arcstore::tools
