// arcstore plot: the seeds' figures as SVG and PNG files, drawn by gnuplot.
//
// Each plot writes its data as whitespace-separated text files next to the
// output, a gnuplot script that reads them, and runs gnuplot once, which
// writes PREFIX.svg (terminal svg) and PREFIX.png (terminal pngcairo):
//
//   latency  (a trace)   PREFIX.dat:       submit_s latency_ms log2_bytes class   (one line per I/O
//                                                                                 and per app write)
//                        PREFIX.syncs.dat: start_s end_s txg                     (one line per txg sync)
//            I/O latency (done - submit) against start time, log scale, coloured
//            by log2 of the size, with a vertical marker at each sync start and
//            the sync's span shaded: the seed's key figure. The application's
//            writes (the trace's W lines; class app:PLACE) are drawn over them,
//            one colour per place where each waited most (app:memory: nowhere
//            for 10 us), so a slow write shows where its time went.
//   arc      (samples)   PREFIX.dat: t_s size_bytes c_bytes c_min_bytes c_max_bytes
//            ARC size and target c over time: the seed's divergence figure.
//   throttle (samples)   PREFIX.dat: t_s dirty_bytes dirty_limit_bytes delay_ms_per_s
//            unsynced dirty bytes against the effective limit min(dirty_max, c/2),
//            and the throttle's delay per second of wall time.
//   sizes    (two traces) PREFIX.dat: size_label count_a count_b (one line per log2 bucket)
//            I/O size histograms of two runs side by side (clustered bars).
//   timeline (one or two bench runs' fio logs, bench_log.h)
//                        PREFIX.dat:       t_s value   (one block per run, panel and direction,
//                                                       blocks apart by two blank lines)
//                        PREFIX.syncs.dat: quiesce_s sync_start_s sync_end_s txg (one block per run)
//            throughput (MiB/s, or IOPS) above latency (ms, log scale) over
//            time, one column per run with the same axes, each txg sync
//            shaded from its start to its end with a line at its start.
//            Windowed logs are drawn as written; per-I/O logs are summed
//            (throughput) or averaged (latency) over bins of bin_ms.
//
// Samples are `arcstore stat --json` lines (trace_file.h). gnuplot's output
// goes to PREFIX.gnuplot.log; a failure quotes it.
//
// Thread-safety: reentrant; runs one gnuplot child process per call.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "stats/registry.h"
#include "tools/plot/bench_log.h"
#include "tools/plot/trace_file.h"

namespace arcstore::tools {

struct PlotOptions {
  std::string output_prefix;       // PREFIX: files are PREFIX.svg, PREFIX.png, PREFIX.dat ...
  std::string gnuplot = "gnuplot"; // the program, looked up on PATH
  std::string title;
  uint32_t width_px = 1200;
  uint32_t height_px = 700;
  std::string label_a = "a", label_b = "b";  // the two runs of a sizes plot
  // Every output is created new (format/output_file.h); with this, an
  // existing regular file that is not a pool is replaced instead.
  bool replace_existing = false;
  // timeline: IOPS instead of MiB/s; the bin for per-I/O logs.
  bool timeline_iops = false;
  uint64_t bin_ms = 500;

  Status Validate() const;
};

struct PlotFiles {
  std::string data, markers, script, svg, png;
  size_t points = 0;   // data lines written (I/Os, samples or buckets)
  size_t markers_n = 0;  // sync markers written
  size_t stalls_n = 0;   // machine stalls marked (timeline)
};

Result<PlotFiles> PlotLatency(const Trace& trace, const PlotOptions& options);
Result<PlotFiles> PlotArc(const std::vector<stats::Snapshot>& samples, const PlotOptions& options);
Result<PlotFiles> PlotThrottle(const std::vector<stats::Snapshot>& samples, const PlotOptions& options);
Result<PlotFiles> PlotSizes(const Trace& a, const Trace& b, const PlotOptions& options);
// One run, or two side by side (labels: label_a, label_b).
Result<PlotFiles> PlotTimeline(const std::vector<BenchRun>& runs, const PlotOptions& options);

}  // namespace arcstore::tools
