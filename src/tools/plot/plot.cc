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

Result<PlotFiles> Finish(const PlotOptions& o, PlotFiles f, const std::string& data,
                         const std::string& markers, const std::string& body) {
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
  ARC_RETURN_IF_ERROR(WriteText(f.script, Frame(o, f, body)));
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
  if (width_px < 200 || width_px > 10000 || height_px < 150 || height_px > 10000) {
    return Status::InvalidArgument("plot: size must be 200..10000 x 150..10000 pixels");
  }
  return Status::Ok();
}

Result<PlotFiles> PlotLatency(const Trace& trace, const PlotOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  if (trace.ios.empty()) return Status::InvalidArgument("trace has no I/O to plot");
  PlotFiles f = Names(options, true);
  std::string data = "# submit_s latency_ms log2_bytes class\n";
  for (const TraceIo& io : trace.ios) {
    double ms = static_cast<double>(io.done_ns - io.submit_ns) / 1e6;
    data += Line("%.9f %.6f %d %s\n", Seconds(io.submit_ns), std::max(ms, 1e-6), Log2(io.bytes),
                 io.io_class.c_str());
  }
  std::string markers = "# start_s end_s txg\n";
  for (const TraceSync& s : trace.syncs) {
    markers += Line("%.9f %.9f %llu\n", Seconds(s.start_ns), Seconds(s.end_ns),
                    static_cast<unsigned long long>(s.txg));
  }
  f.points = trace.ios.size();
  f.markers_n = trace.syncs.size();
  std::string body =
      "set xlabel 'I/O start time (s since trace start)'\nset ylabel 'latency (ms)'\n"
      "set xrange [0:*]\nset logscale y\nset cblabel 'log2(I/O size in bytes)'\nset palette rgbformulae 33,13,10\n"
      "set y2range [0:1]\nunset y2tics\n";
  std::string plot = "plot " + Q(f.data) + " using 1:2:3 with points pt 7 ps 0.4 lc palette title 'I/O'";
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
