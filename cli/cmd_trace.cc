// arcstore trace and arcstore plot.
//
//   arcstore trace start POOL [--output FILE] [--ring N]   through the server's
//   arcstore trace stop POOL                                 control socket
//   arcstore plot latency TRACE -o PREFIX
//   arcstore plot arc SAMPLES -o PREFIX          (SAMPLES: arcstore stat --json > SAMPLES)
//   arcstore plot throttle SAMPLES -o PREFIX
//   arcstore plot sizes TRACE_A TRACE_B -o PREFIX [--labels A,B]
//   arcstore plot timeline RUN [RUN_B] -o PREFIX [--labels A,B] [--iops] [--job N] [--bin-ms MS]
//                          (RUN: a bench log prefix, or one of its files)
//
// A trace is written by the server's process (format: docs/observability.md),
// so it needs a running `arcstore serve`; FILE defaults to POOL.trace and is
// resolved here (format::ResolveOutputPath) before it is sent; the server
// checks it again and creates it new (--force: may replace a regular file
// that is not a pool). Plots are PREFIX.svg and PREFIX.png, drawn
// by gnuplot (tools/plot/plot.h).
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/observe.h"
#include "format/output_file.h"
#include "tools/plot/plot.h"
#include "tools/source/control.h"

namespace arcstore::cli {
namespace {

void AddTrace(CLI::App& app) {
  struct Args {
    SourceArgs source;
    std::string output;
    uint64_t ring = 1 << 16;
    bool force = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("trace", "Start or stop a running server's per-I/O trace");
  cmd->require_subcommand(1);
  CLI::App* start = cmd->add_subcommand("start", "start tracing every I/O to a file");
  start->add_option("POOL", a->source.pool, "the pool a server is serving")->required();
  start->add_option("--output", a->output,
                    "trace file (default POOL.trace); a new file, never a device or a pool");
  start->add_flag("--force", a->force, "replace an existing regular file that is not a pool");
  start->add_option("--ring", a->ring, "ring buffer entries between the I/O path and the file")
      ->check(CLI::Range(uint64_t{1}, tools::kMaxTraceRingEntries));
  start->add_option("--control", a->source.control, "the server's control socket (default POOL.ctl)");
  start->callback([a] {
    a->source.live = true;
    tools::OpenedSource src = OpenSource(a->source);
    std::string out = OrFail(
        format::ResolveOutputPath(a->output.empty() ? a->source.pool + ".trace" : a->output),
        "trace start");
    Status s = src.source->StartTrace(out, a->ring, a->force);
    if (!s.ok()) throw CommandFailed("trace start: " + s.message());
    Print("tracing " + src.source->Describe() + " to " + out + "\n");
  });
  CLI::App* stop = cmd->add_subcommand("stop", "stop tracing and flush the file");
  stop->add_option("POOL", a->source.pool, "the pool a server is serving")->required();
  stop->add_option("--control", a->source.control, "the server's control socket (default POOL.ctl)");
  stop->callback([a] {
    a->source.live = true;
    tools::OpenedSource src = OpenSource(a->source);
    Status s = src.source->StopTrace();
    if (!s.ok()) throw CommandFailed("trace stop: " + s.message());
    Print("trace stopped\n");
  });
}

void Report(const tools::PlotFiles& f) {
  std::string out = "wrote " + f.svg + " and " + f.png + " (" + std::to_string(f.points) + " points";
  if (!f.markers.empty()) out += ", " + std::to_string(f.markers_n) + " txg syncs";
  if (f.stalls_n > 0) out += ", " + std::to_string(f.stalls_n) + " machine stalls";
  Print(out + "; data " + f.data + ")\n");
}

void AddPlot(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs;
    tools::PlotOptions options;
    std::string labels;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("plot", "Plots (SVG and PNG, via gnuplot) from a trace, stat samples or bench logs");
  cmd->require_subcommand(1);
  auto common = [a](CLI::App* c, const char* input_help, int inputs, int max_inputs = 0) {
    c->add_option("INPUT", a->inputs, input_help)->required()->expected(inputs, std::max(inputs, max_inputs));
    c->add_option("-o,--output", a->options.output_prefix, "output prefix: PREFIX.svg, PREFIX.png, PREFIX.dat")
        ->required();
    c->add_option("--title", a->options.title, "plot title");
    c->add_option("--width", a->options.width_px, "pixels");
    c->add_option("--height", a->options.height_px, "pixels");
    c->add_flag("--force", a->options.replace_existing,
                "replace existing output files (regular files that are not pools)");
  };
  auto samples = [a] {
    auto text = OrFail(tools::ReadWholeFile(a->inputs[0], 1u << 30), "plot");
    return OrFail(tools::ReadSamples(text), a->inputs[0]);
  };
  CLI::App* latency = cmd->add_subcommand("latency", "I/O latency vs start time, coloured by size, txg syncs marked");
  common(latency, "trace file (arcstore trace)", 1);
  latency->callback([a] {
    if (a->options.title.empty()) a->options.title = "I/O latency: " + a->inputs[0];
    Report(OrFail(tools::PlotLatency(OrFail(tools::ReadTraceFile(a->inputs[0]), "plot"), a->options), "plot"));
  });
  CLI::App* arc = cmd->add_subcommand("arc", "ARC size and target c over time");
  common(arc, "samples (arcstore stat --json output)", 1);
  arc->callback([a, samples] {
    if (a->options.title.empty()) a->options.title = "ARC size and c: " + a->inputs[0];
    Report(OrFail(tools::PlotArc(samples(), a->options), "plot"));
  });
  CLI::App* thr = cmd->add_subcommand("throttle", "dirty bytes and throttle delay over time");
  common(thr, "samples (arcstore stat --json output)", 1);
  thr->callback([a, samples] {
    if (a->options.title.empty()) a->options.title = "dirty data and throttle: " + a->inputs[0];
    Report(OrFail(tools::PlotThrottle(samples(), a->options), "plot"));
  });
  CLI::App* timeline = cmd->add_subcommand(
      "timeline", "throughput and latency over time from bench/fio logs, txg syncs marked; two runs side by side");
  common(timeline, "one or two runs: a log prefix (arcstore bench --write_bw_log=P) or one of its files", 1, 2);
  timeline->add_option("--labels", a->labels, "A,B: names of the runs (default: the inputs)");
  timeline->add_flag("--iops", a->options.timeline_iops, "IOPS (from the iops log) instead of MiB/s");
  timeline->add_option("--bin-ms", a->options.bin_ms, "per-I/O logs: bin width in ms (default 500)");
  auto job = std::make_shared<uint32_t>(0);
  timeline->add_option("--job", *job, "the job number N of PREFIX_bw.N.log when a prefix has several");
  timeline->callback([a, job] {
    std::vector<tools::BenchRun> runs;
    for (const std::string& in : a->inputs) {
      runs.push_back(OrFail(tools::LoadBenchRun(in, *job == 0 ? std::nullopt : std::optional<uint32_t>(*job)),
                            "plot timeline"));
    }
    a->options.label_a = a->inputs[0];
    a->options.label_b = a->inputs.size() > 1 ? a->inputs[1] : "";
    if (!a->labels.empty()) {
      size_t comma = a->labels.find(',');
      a->options.label_a = a->labels.substr(0, comma);
      if (comma != std::string::npos) a->options.label_b = a->labels.substr(comma + 1);
    }
    if (a->options.title.empty()) {
      a->options.title = runs.size() == 1 ? "throughput and latency over time, txg syncs marked"
                                          : "before and after: throughput and latency over time, txg syncs marked";
    }
    Report(OrFail(tools::PlotTimeline(runs, a->options), "plot timeline"));
  });
  CLI::App* sizes = cmd->add_subcommand("sizes", "I/O size histograms of two traces side by side");
  common(sizes, "two trace files", 2);
  sizes->add_option("--labels", a->labels, "A,B: names of the two runs (default: the file names)");
  sizes->callback([a] {
    a->options.label_a = a->inputs[0];
    a->options.label_b = a->inputs[1];
    if (!a->labels.empty()) {
      size_t comma = a->labels.find(',');
      if (comma == std::string::npos) throw UsageError("--labels: want A,B");
      a->options.label_a = a->labels.substr(0, comma);
      a->options.label_b = a->labels.substr(comma + 1);
    }
    if (a->options.title.empty()) a->options.title = "I/O sizes";
    Report(OrFail(tools::PlotSizes(OrFail(tools::ReadTraceFile(a->inputs[0]), "plot"),
                                   OrFail(tools::ReadTraceFile(a->inputs[1]), "plot"), a->options),
                  "plot"));
  });
}

}  // namespace

void AddTraceCommands(CLI::App& app) {
  AddTrace(app);
  AddPlot(app);
}

}  // namespace arcstore::cli
