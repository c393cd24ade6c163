#include "tools/plot/plot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

#include "format/output_file.h"
#include "stats/stats.h"

extern char** environ;

namespace arcstore::tools {

namespace {

// Paths and titles go into the script between single quotes.
bool Quotable(const std::string& s) { return s.find_first_of("'\n\r") == std::string::npos; }

std::string Q(const std::string& s) { return "'" + s + "'"; }

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IOError(path + ": cannot create: " + std::strerror(errno));
  out << text;
  out.close();
  if (!out) return Status::IOError(path + ": write failed");
  return Status::Ok();
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > 600 ? text.substr(text.size() - 600) : text;
}

std::string GnuplotLog(const PlotOptions& o) { return o.output_prefix + ".gnuplot.log"; }

Status RunGnuplot(const PlotOptions& o, const std::string& script) {
  std::string log = GnuplotLog(o);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::string prog = o.gnuplot, arg = script;
  char* argv[] = {prog.data(), arg.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, prog.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    return Status::NotFound("cannot run " + prog + ": " + std::strerror(rc) +
                            " (install gnuplot-nox: scripts/setup)");
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::IOError(std::string("waitpid: ") + std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Internal(prog + " failed on " + script + ": " + Tail(log));
  }
  return Status::Ok();
}

// The script's frame: SVG first, then the same plot as PNG.
std::string Frame(const PlotOptions& o, const PlotFiles& f, const std::string& body) {
  std::string size = std::to_string(o.width_px) + "," + std::to_string(o.height_px);
  std::string s = "set terminal svg size " + size + " dynamic background rgb 'white' noenhanced\n";
  s += "set output " + Q(f.svg) + "\n";
  s += "set title " + Q(o.title) + " noenhanced\n";
  s += "set grid\nset key outside bottom center horizontal\n";
  s += body;
  s += "set terminal pngcairo size " + size + " background rgb 'white' noenhanced\n";
  s += "set output " + Q(f.png) + "\nreplot\nunset output\n";
  return s;
}

// A multiplot cannot be replotted: the body is written once per terminal.
std::string FrameMultiplot(const PlotOptions& o, const PlotFiles& f, const std::string& body) {
  std::string size = std::to_string(o.width_px) + "," + std::to_string(o.height_px);
  std::string s = "set terminal svg size " + size + " dynamic background rgb 'white' noenhanced\n";
  s += "set output " + Q(f.svg) + "\nset grid\n" + body;
  s += "set terminal pngcairo size " + size + " background rgb 'white' noenhanced\n";
  s += "set output " + Q(f.png) + "\n" + body + "unset output\n";
  return s;
}

Result<PlotFiles> Finish(const PlotOptions& o, PlotFiles f, const std::string& data,
                         const std::string& markers, const std::string& body, bool multiplot = false) {
  // All outputs are claimed under the output-file rule before any is written.
  format::OutputFileOptions reserve;
  reserve.replace_existing = o.replace_existing;
  for (std::string* path : {&f.data, &f.markers, &f.script, &f.svg, &f.png}) {
    if (path->empty()) continue;
    ARC_ASSIGN_OR_RETURN(*path, format::ReserveOutputFile(*path, reserve));
  }
  ARC_RETURN_IF_ERROR(format::ReserveOutputFile(GnuplotLog(o), reserve).status());
  ARC_RETURN_IF_ERROR(WriteText(f.data, data));
  if (!f.markers.empty()) ARC_RETURN_IF_ERROR(WriteText(f.markers, markers));
  ARC_RETURN_IF_ERROR(WriteText(f.script, multiplot ? FrameMultiplot(o, f, body) : Frame(o, f, body)));
  ARC_RETURN_IF_ERROR(RunGnuplot(o, f.script));
  return f;
}

PlotFiles Names(const PlotOptions& o, bool markers) {
  PlotFiles f;
  f.data = o.output_prefix + ".dat";
  if (markers) f.markers = o.output_prefix + ".syncs.dat";
  f.script = o.output_prefix + ".gp";
  f.svg = o.output_prefix + ".svg";
  f.png = o.output_prefix + ".png";
  return f;
}

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

int Log2(uint64_t bytes) { return bytes == 0 ? 0 : 63 - __builtin_clzll(bytes); }

std::string Line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Line(const char* fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

double Get(const stats::Snapshot& s, const char* module, const char* name) {
  return static_cast<double>(s.Get(module, name));
}

Status NeedSamples(const std::vector<stats::Snapshot>& samples) {
  if (samples.size() < 2) {
    return Status::InvalidArgument("samples: " + std::to_string(samples.size()) +
                                   " snapshot(s); a plot over time needs at least 2");
  }
  return Status::Ok();
}

}  // namespace

Status PlotOptions::Validate() const {
  if (output_prefix.empty()) return Status::InvalidArgument("plot: an output prefix is needed (-o)");
  for (const std::string* s : {&output_prefix, &title, &label_a, &label_b}) {
    if (!Quotable(*s)) return Status::InvalidArgument("plot: '" + *s + "' contains a quote or a newline");
  }
  if (bin_ms < 1 || bin_ms > 3'600'000) return Status::InvalidArgument("plot: --bin-ms must be 1..3600000");
  if (width_px < 200 || width_px > 10000 || height_px < 150 || height_px > 10000) {
    return Status::InvalidArgument("plot: size must be 200..10000 x 150..10000 pixels");
  }
  return Status::Ok();
}

namespace {

// Where a traced application write spent most of its waiting time: a
// place's name, or "memory" when no place held it kTraceWaitFloorNs.
constexpr uint64_t kTraceWaitFloorNs = 10'000;
const char* DominantWait(const TraceWrite& w) {
  int top = -1;
  uint64_t top_ns = kTraceWaitFloorNs - 1;
  for (int i = 0; i < kTraceWaitPlaces; i++) {
    if (w.wait_ns[i] > top_ns) top = i, top_ns = w.wait_ns[i];
  }
  return top < 0 ? "memory" : kWaitPlaces[top];
}

// The application writes' series, one per place that held some of them.
std::string WriteSeries(const Trace& trace, const std::string& data) {
  static constexpr const char* kPlaces[] = {"memory", "space", "buffer", "throttle", "lock", "rmw_read"};
  static constexpr const char* kColours[] = {"#404040", "#8c564b", "#9467bd", "#1f77b4", "#d62728", "#ff7f0e"};
  std::string series;
  for (size_t p = 0; p < std::size(kPlaces); p++) {
    const bool any = std::any_of(trace.writes.begin(), trace.writes.end(), [&](const TraceWrite& w) {
      return std::string_view(DominantWait(w)) == kPlaces[p];
    });
    if (!any) continue;
    const std::string title = p == 0 ? "app writes (no wait)" : std::string("app writes waiting on ") + kPlaces[p];
    series += ", " + data + " using 1:(strcol(4) eq 'app:" + kPlaces[p] + "' ? $2 : NaN) with points pt 6 ps 0.7 lc rgb '" +
              kColours[p] + "' title '" + title + "'";
  }
  return series;
}

}  // namespace

Result<PlotFiles> PlotLatency(const Trace& trace, const PlotOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  if (trace.ios.empty() && trace.writes.empty() && trace.cache_ios.empty()) {
    return Status::InvalidArgument("trace has no I/O to plot");
  }
  PlotFiles f = Names(options, true);
  std::string data = "# submit_s latency_ms log2_bytes class\n";
  for (const TraceIo& io : trace.ios) {
    double ms = static_cast<double>(io.done_ns - io.submit_ns) / 1e6;
    data += Line("%.9f %.6f %d %s\n", Seconds(io.submit_ns), std::max(ms, 1e-6), Log2(io.bytes),
                 io.io_class.c_str());
  }
  // Application writes (W lines): their whole time in the engine, the class
  // naming where they waited most.
  for (const TraceWrite& w : trace.writes) {
    double ms = static_cast<double>(w.done_ns - w.start_ns) / 1e6;
    data += Line("%.9f %.6f %d app:%s\n", Seconds(w.start_ns), std::max(ms, 1e-6), Log2(w.bytes),
                 DominantWait(w));
  }
  // Cache devices' reads and writes (C lines): the second cache level's
  // hits and the feed's slot writes, a series of their own.
  for (const TraceCacheIo& c : trace.cache_ios) {
    double ms = static_cast<double>(c.io.done_ns - c.io.submit_ns) / 1e6;
    data += Line("%.9f %.6f %d cache:%s\n", Seconds(c.io.submit_ns), std::max(ms, 1e-6),
                 Log2(c.io.bytes), c.io.op.c_str());
  }
  std::string markers = "# start_s end_s txg\n";
  for (const TraceSync& s : trace.syncs) {
    markers += Line("%.9f %.9f %llu\n", Seconds(s.start_ns), Seconds(s.end_ns),
                    static_cast<unsigned long long>(s.txg));
  }
  f.points = trace.ios.size() + trace.writes.size() + trace.cache_ios.size();
  f.markers_n = trace.syncs.size();
  std::string body =
      "set xlabel 'I/O start time (s since trace start)'\nset ylabel 'latency (ms)'\n"
      "set xrange [0:*]\nset logscale y\nset cblabel 'log2(I/O size in bytes)'\nset palette rgbformulae 33,13,10\n"
      "set y2range [0:1]\nunset y2tics\n";
  std::string plot = "plot " + Q(f.data) +
                     " using 1:(strcol(4)[1:4] eq 'app:' || strcol(4)[1:6] eq 'cache:' ? NaN : $2):3 "
                     "with points pt 7 ps 0.4 lc palette title 'device I/O'" +
                     WriteSeries(trace, Q(f.data));
  if (!trace.cache_ios.empty()) {
    plot += ", " + Q(f.data) +
            " using 1:(strcol(4)[1:6] eq 'cache:' ? $2 : NaN) with points pt 9 ps 0.5 "
            "lc rgb 'dark-green' title 'cache device I/O'";
  }
  if (!trace.syncs.empty()) {
    plot += ", " + Q(f.markers) +
            " using 1:(0.5):1:2:(0):(1) axes x1y2 with boxxyerror fs transparent solid 0.12 noborder "
            "lc rgb 'gray' notitle, " +
            Q(f.markers) + " using 1:(1) axes x1y2 with impulses lw 1.5 lc rgb 'red' title 'txg sync start'";
  }
  return Finish(options, f, data, markers, body + plot + "\n");
}

Result<PlotFiles> PlotArc(const std::vector<stats::Snapshot>& samples, const PlotOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  ARC_RETURN_IF_ERROR(NeedSamples(samples));
  PlotFiles f = Names(options, false);
  std::string data = "# t_s size_bytes c_bytes c_min_bytes c_max_bytes\n";
  for (const stats::Snapshot& s : samples) {
    data += Line("%.3f %.0f %.0f %.0f %.0f\n", Seconds(s.taken_ns - samples.front().taken_ns),
                 Get(s, "arcstats", "size"), Get(s, "arcstats", "c"), Get(s, "arcstats", "c_min"),
                 Get(s, "arcstats", "c_max"));
  }
  f.points = samples.size();
  std::string d = Q(f.data);
  std::string body =
      "set xlabel 'time (s)'\nset ylabel 'MiB'\nM = 1048576.0\n"
      "plot " + d + " using 1:($2/M) with lines lw 2 title 'size', " + d +
      " using 1:($3/M) with lines lw 2 title 'c (target)', " + d +
      " using 1:($4/M) with lines dt 2 title 'c_min', " + d + " using 1:($5/M) with lines dt 2 title 'c_max'\n";
  return Finish(options, f, data, "", body);
}

Result<PlotFiles> PlotThrottle(const std::vector<stats::Snapshot>& samples, const PlotOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  ARC_RETURN_IF_ERROR(NeedSamples(samples));
  PlotFiles f = Names(options, false);
  std::string data = "# t_s dirty_bytes dirty_limit_bytes delay_ms_per_s\n";
  bool any_delay = false;
  for (size_t i = 0; i < samples.size(); i++) {
    const stats::Snapshot& s = samples[i];
    double limit = std::min(Get(s, "txg", "dirty_max_bytes"), std::floor(Get(s, "arcstats", "c") / 2));
    double delay = 0;
    if (i > 0) {
      double dt = Seconds(s.taken_ns - samples[i - 1].taken_ns);
      double dd = Get(s, "txg", "delay_ns") - Get(samples[i - 1], "txg", "delay_ns");
      delay = dt > 0 ? std::max(0.0, dd) / 1e6 / dt : 0;
    }
    any_delay = any_delay || delay > 0;
    data += Line("%.3f %.0f %.0f %.3f\n", Seconds(s.taken_ns - samples.front().taken_ns),
                 Get(s, "txg", "dirty_bytes"), limit, delay);
  }
  f.points = samples.size();
  std::string d = Q(f.data);
  std::string body =
      "set xlabel 'time (s)'\nset ylabel 'dirty (MiB)'\nM = 1048576.0\n"
      "set y2label 'throttle delay (ms per s)'\nset y2tics\nset ytics nomirror\n"
      // A delay is never negative; with none at all, the axis still reads 0 up.
      + std::string(any_delay ? "set y2range [0:*]\n" : "set y2range [0:1]\n") +
      "plot " + d + " using 1:($2/M) with lines lw 2 title 'dirty (unsynced)', " + d +
      " using 1:($3/M) with lines dt 2 title 'limit min(dirty_max, c/2)', " + d +
      " using 1:4 axes x1y2 with lines lw 2 title " +
      Q(any_delay ? "throttle delay" : "throttle delay (none in these samples)") + "\n";
  return Finish(options, f, data, "", body);
}

Result<PlotFiles> PlotSizes(const Trace& a, const Trace& b, const PlotOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  // Flushes (and anything else without a size) have no bar: they are counted
  // and named in the axis label instead.
  stats::HistogramData ha, hb;
  uint64_t sizeless = 0;
  for (const auto& [trace, hist] : {std::pair{&a, &ha}, std::pair{&b, &hb}}) {
    for (const TraceIo& io : trace->ios) {
      if (io.bytes == 0) {
        sizeless++;
        continue;
      }
      hist->buckets[stats::HistogramData::BucketOf(io.bytes)]++;
    }
  }
  int first = stats::HistogramData::kBuckets, last = -1;
  for (int i = 0; i < stats::HistogramData::kBuckets; i++) {
    if (ha.buckets[i] + hb.buckets[i] == 0) continue;
    first = std::min(first, i);
    last = std::max(last, i);
  }
  if (last < 0) return Status::InvalidArgument("neither trace has an I/O to plot");
  PlotFiles f = Names(options, false);
  std::string data = "# size count_" + options.label_a + " count_" + options.label_b + "\n";
  for (int i = first; i <= last; i++) {
    uint64_t low = stats::HistogramData::BucketLow(i);
    std::string label = low >= (1u << 20) ? std::to_string(low >> 20) + "M"
                        : low >= 1024     ? std::to_string(low >> 10) + "K"
                                          : std::to_string(low);
    data += label + " " + std::to_string(ha.buckets[i]) + " " + std::to_string(hb.buckets[i]) + "\n";
    f.points++;
  }
  std::string d = Q(f.data);
  std::string body =
      "set xlabel " +
      Q("I/O size (log2 bucket, lower bound)" +
        (sizeless > 0 ? "; " + std::to_string(sizeless) + " flushes (no size) not shown" : "")) +
      "\nset ylabel 'I/Os'\n"
      "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
      "plot " + d + " using 2:xtic(1) title " + Q(options.label_a) + ", " + d + " using 3 title " +
      Q(options.label_b) + "\n";
  return Finish(options, f, data, "", body);
}

}  // namespace arcstore::tools

namespace arcstore::tools {
namespace {

const char* const kDirNames[] = {"read", "write", "trim"};
// The timeline's line colours by direction, fixed so that the marks drawn
// before the lines (txg syncs, machine stalls) do not shift them.
const char* const kDirColours[] = {"#0072b2", "#009e73", "#cc79a7"};

// One line of a panel: (t_s, value) points of one direction.
struct Series {
  int dir = 0;
  std::vector<std::pair<double, double>> points;
};

bool PerIo(const std::vector<FioLogRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const FioLogRow& r) { return r.block_bytes != 0; });
}

// Windowed rows as written, scaled; per-I/O rows folded into bins of
// bin_ms: `sum` adds fold(row) per bin and divides by the bin's seconds,
// else the bin's mean of fold(row).
std::vector<Series> ToSeries(const std::vector<FioLogRow>& rows, double scale, bool per_io_sum,
                             uint64_t bin_ms, double (*fold)(const FioLogRow&)) {
  std::vector<Series> out;
  const bool per_io = PerIo(rows);
  for (int d = 0; d < 3; d++) {
    Series s;
    s.dir = d;
    if (!per_io) {
      for (const FioLogRow& r : rows) {
        if (r.dir == d) s.points.emplace_back(static_cast<double>(r.time_ms) / 1e3, static_cast<double>(r.value) * scale);
      }
    } else {
      std::map<uint64_t, std::pair<double, uint64_t>> bins;  // bin -> (sum, count)
      for (const FioLogRow& r : rows) {
        if (r.dir != d) continue;
        auto& b = bins[r.time_ms / bin_ms];
        b.first += fold(r);
        b.second++;
      }
      for (const auto& [bin, b] : bins) {
        const double t = static_cast<double>((bin + 1) * bin_ms) / 1e3;
        const double v = per_io_sum ? b.first / (static_cast<double>(bin_ms) / 1e3) : b.first / static_cast<double>(b.second);
        s.points.emplace_back(t, v * scale);
      }
    }
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  return out;
}

double FoldBytes(const FioLogRow& r) { return static_cast<double>(r.block_bytes); }
double FoldOne(const FioLogRow&) { return 1.0; }
double FoldValue(const FioLogRow& r) { return static_cast<double>(r.value); }

struct Panel {
  std::vector<Series> series;
  int first_index = 0;  // the data file's block of series[0]
};

// Each run's two panels: throughput (MiB/s from the bw log's KiB/s, or
// IOPS; per-I/O logs binned) and latency (ms). `all_tput`/`all_lat`: every
// run has entries for that panel (a panel is drawn only then).
struct Panels {
  std::vector<Panel> tput, lat;
  bool all_tput = true, all_lat = true;
};

Result<Panels> BuildPanels(const std::vector<BenchRun>& runs, const PlotOptions& options) {
  Panels p;
  p.tput.resize(runs.size());
  p.lat.resize(runs.size());
  for (size_t i = 0; i < runs.size(); i++) {
    const BenchRun& r = runs[i];
    if (options.timeline_iops && !r.has_iops) {
      return Status::InvalidArgument("timeline: --iops needs an iops log; " + r.name + " has none");
    }
    const bool use_iops = r.has_iops && (options.timeline_iops || !r.has_bw);
    if (use_iops) {
      p.tput[i].series = PerIo(r.iops) ? ToSeries(r.iops, 1.0, true, options.bin_ms, FoldOne)
                                       : ToSeries(r.iops, 1.0, false, options.bin_ms, FoldValue);
    } else if (r.has_bw) {
      p.tput[i].series = PerIo(r.bw)
                             ? ToSeries(r.bw, 1.0 / 1048576.0, true, options.bin_ms, FoldBytes)
                             : ToSeries(r.bw, 1.0 / 1024.0, false, options.bin_ms, FoldValue);
    }
    if (r.has_lat) p.lat[i].series = ToSeries(r.lat, 1e-6, false, options.bin_ms, FoldValue);
    p.all_tput = p.all_tput && !p.tput[i].series.empty();
    p.all_lat = p.all_lat && !p.lat[i].series.empty();
  }
  if (!p.all_tput && !p.all_lat) {
    return Status::InvalidArgument("timeline: no run has entries for both panels' kind in every run");
  }
  return p;
}

// The axes' ranges over every panel drawn.
struct Ranges {
  double t_max = 0, tput_max = 0, lat_min = 1e300, lat_max = 0;
};

// The data file: one block per series, run by run (throughput, then
// latency); sets each panel's first block.
std::string TimelineData(Panels* p, const std::vector<std::string>& labels,
                         const std::string& tput_unit, PlotFiles* f, Ranges* r) {
  std::string data;
  int block = 0;
  auto emit = [&](Panel* panel, const std::string& what, const std::string& run_label) {
    panel->first_index = block;
    for (const Series& s : panel->series) {
      if (block > 0) data += "\n\n";
      data += "# " + run_label + ": " + kDirNames[s.dir] + " " + what + "\n";
      for (const auto& [t, v] : s.points) {
        data += Line("%.3f %.6f\n", t, v);
        r->t_max = std::max(r->t_max, t);
        f->points++;
      }
      block++;
    }
  };
  for (size_t i = 0; i < p->tput.size(); i++) {
    if (p->all_tput) emit(&p->tput[i], tput_unit, labels[i]);
    if (p->all_lat) emit(&p->lat[i], "latency ms", labels[i]);
    for (const Series& s : p->tput[i].series) {
      for (const auto& pt : s.points) r->tput_max = std::max(r->tput_max, pt.second);
    }
    for (const Series& s : p->lat[i].series) {
      for (const auto& pt : s.points) {
        if (pt.second > 0) r->lat_min = std::min(r->lat_min, pt.second);
        r->lat_max = std::max(r->lat_max, pt.second);
      }
    }
  }
  if (r->lat_max <= 0) r->lat_min = 1e-3, r->lat_max = 1;
  return data;
}

// The markers file: each run's txg syncs (one block per run), then each
// run's machine stalls (block runs.size() + run); `has_marks` and
// `has_stalls` say which runs have any. gnuplot numbers only blocks that
// hold a data line, so an empty block holds one undefined point (NaN),
// which nothing plots.
std::string TimelineMarkers(const std::vector<BenchRun>& runs,
                            const std::vector<std::string>& labels, PlotFiles* f,
                            std::vector<bool>* has_marks, std::vector<bool>* has_stalls) {
  std::string markers = "# quiesce_s sync_start_s sync_end_s txg\n";
  has_marks->assign(runs.size(), false);
  has_stalls->assign(runs.size(), false);
  for (size_t i = 0; i < runs.size(); i++) {
    if (i > 0) markers += "\n\n";
    markers += "# " + labels[i] + "\n";
    for (const TxgMark& m : runs[i].txgs) {
      markers += Line("%.3f %.3f %.3f %llu\n", static_cast<double>(m.quiesce_ms) / 1e3,
                      static_cast<double>(m.sync_start_ms) / 1e3,
                      static_cast<double>(m.sync_end_ms) / 1e3,
                      static_cast<unsigned long long>(m.txg));
      f->markers_n++;
      (*has_marks)[i] = true;
    }
    if (!(*has_marks)[i]) markers += "NaN NaN NaN 0\n";
  }
  for (size_t i = 0; i < runs.size(); i++) {
    markers += "\n\n# " + labels[i] + ": machine stalls, start_s end_s\n";
    for (const StallMark& m : runs[i].stalls) {
      markers += Line("%.6f %.6f\n", static_cast<double>(m.start_us) / 1e6,
                      static_cast<double>(m.start_us + m.duration_us) / 1e6);
      f->stalls_n++;
      (*has_stalls)[i] = true;
    }
    if (!(*has_stalls)[i]) markers += "NaN NaN\n";
  }
  return markers;
}

// The gnuplot script: a multiplot of the panels, one column per run, syncs
// shaded from start to end with a red line at each start.
std::string TimelineScript(const std::vector<BenchRun>& runs, const Panels& p,
                           const std::vector<std::string>& labels, const std::string& tput_unit,
                           const PlotOptions& options, const PlotFiles& f, const Ranges& r,
                           const std::vector<bool>& has_marks,
                           const std::vector<bool>& has_stalls) {
  const int rows = (p.all_tput ? 1 : 0) + (p.all_lat ? 1 : 0);
  std::string body = "set multiplot layout " + std::to_string(rows) + "," +
                     std::to_string(runs.size()) + " columnsfirst title " + Q(options.title) +
                     " noenhanced\n";
  // Fixed margins: the panels' time axes line up whatever their tick labels.
  body += "set lmargin 12\nset rmargin 4\n";
  body += "set key outside bottom center horizontal\nset xrange [0:" +
          Line("%.3f", std::max(r.t_max, 0.001)) + "]\nset y2range [0:1]\nunset y2tics\n";
  auto spans = [&](size_t i) -> std::string {
    std::string out;
    if (has_stalls[i]) {
      out += Q(f.markers) + " index " + std::to_string(runs.size() + i) +
             " using 1:(0.5):1:2:(0):(1) axes x1y2 with boxxyerror fs transparent solid 0.35 "
             "noborder lc rgb 'orange' title 'machine stall (no CPU ran the bench)', ";
    }
    if (!has_marks[i]) return out;
    const std::string m = Q(f.markers) + " index " + std::to_string(i);
    return out + m +
           " using 2:(0.5):2:3:(0):(1) axes x1y2 with boxxyerror fs transparent solid 0.15 "
           "noborder lc rgb 'gray40' notitle, " +
           m +
           " using 2:(1) axes x1y2 with impulses lw 1 lc rgb 'red' title 'txg sync (start; "
           "shaded to its end)', ";
  };
  auto lines = [&](const Panel& panel) {
    std::string out;
    for (size_t k = 0; k < panel.series.size(); k++) {
      if (k > 0) out += ", ";
      out += Q(f.data) + " index " + std::to_string(panel.first_index + static_cast<int>(k)) +
             " using 1:2 with linespoints lw 2 pt 7 ps 0.4 lc rgb '" +
             kDirColours[panel.series[k].dir] + "' title " +
             Q(kDirNames[panel.series[k].dir]);
    }
    return out;
  };
  for (size_t i = 0; i < runs.size(); i++) {
    const std::string title = "set title " + Q(labels[i] + " (" + runs[i].name + ")") + " noenhanced\n";
    if (p.all_tput) {
      body += title;
      body += "unset logscale y\nset ylabel " + Q(tput_unit) + "\nset xlabel ''\n";
      body += "set yrange [0:" + Line("%.6g", std::max(r.tput_max * 1.05, 1e-3)) + "]\n";
      body += "plot " + spans(i) + lines(p.tput[i]) + "\n";
    }
    if (p.all_lat) {
      body += p.all_tput ? "set title ''\n" : title;
      body += "set logscale y\nset ylabel " + Q("latency (ms, " + runs[i].lat_kind + ")") +
              "\nset xlabel 'time (s since the job started)'\n";
      body += "set yrange [" + Line("%.6g", r.lat_min / 1.5) + ":" + Line("%.6g", r.lat_max * 1.5) +
              "]\n";
      body += "plot " + spans(i) + lines(p.lat[i]) + "\n";
    }
  }
  body += "unset multiplot\n";
  return body;
}

}  // namespace

Result<PlotFiles> PlotTimeline(const std::vector<BenchRun>& runs, const PlotOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  if (runs.empty() || runs.size() > 2) return Status::InvalidArgument("timeline: one or two runs");
  ARC_ASSIGN_OR_RETURN(Panels panels, BuildPanels(runs, options));
  PlotFiles f = Names(options, true);
  const std::vector<std::string> labels = {options.label_a, options.label_b};
  const std::string tput_unit = options.timeline_iops ? "IOPS" : "MiB/s";
  Ranges ranges;
  const std::string data = TimelineData(&panels, labels, tput_unit, &f, &ranges);
  std::vector<bool> has_marks, has_stalls;
  const std::string markers = TimelineMarkers(runs, labels, &f, &has_marks, &has_stalls);
  const std::string body = TimelineScript(runs, panels, labels, tput_unit, options, f, ranges,
                                          has_marks, has_stalls);
  return Finish(options, f, data, markers, body, /*multiplot=*/true);
}

}  // namespace arcstore::tools
