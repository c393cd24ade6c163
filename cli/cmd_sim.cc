// arcstore sim TRACE --policy P[,P...] --cache-size N[,N...]: cache policies
// on a block trace. One policy at one size prints the detail of that run;
// more print one table of hit ratios (sim_table.h). --json FILE writes the
// hit-ratio curve.
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/units.h"
#include "cli/commands.h"
#include "cli/report_sink.h"
#include "tools/sim/sim.h"
#include "tools/sim/sim_table.h"

namespace arcstore::cli {
namespace {

struct SimArgs {
  std::string trace;
  std::string cache_size;
  std::string policy = "arc";
  uint64_t page_bytes = 512;
  std::string format = "auto";
  std::string csv_columns = "0,1,2";
  bool reads_only = false;
  std::string json_path;
  bool force = false;
  bool progress = false;
};

void ParseCsvColumns(const std::string& text, sim::TraceOptions* t) {
  int cols[3] = {-1, -1, -1};
  int n = std::sscanf(text.c_str(), "%d,%d,%d", &cols[0], &cols[1], &cols[2]);
  if (n < 2 || cols[0] < 0 || cols[1] < -1 || cols[0] > 15 || cols[1] > 15 || cols[2] > 15) {
    throw UsageError("--csv-columns: want OFFSET,SIZE[,OP] column numbers (0-15; SIZE -1: OFFSET is a page key)");
  }
  t->csv_offset_column = cols[0];
  t->csv_size_column = cols[1];
  t->csv_op_column = n == 3 ? cols[2] : -1;
}

std::string Pages(uint64_t bytes, uint64_t page_bytes) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%" PRIu64 " pages (%s)", bytes / page_bytes,
                FormatBytes(bytes).c_str());
  return buf;
}

void PrintText(const SimArgs& a, const sim::SimOptions& o, const sim::SimResult& r) {
  std::printf("trace       %s (%s, %s, %" PRIu64 " lines)\n", a.trace.c_str(),
              r.trace_format.c_str(), r.encoding.c_str(), r.lines);
  std::printf("policy      %s, c = %s, pages of %" PRIu64 " B\n",
              std::string(sim::SimPolicyName(o.policy)).c_str(),
              Pages(o.cache_pages * o.page_bytes, o.page_bytes).c_str(), o.page_bytes);
  std::printf("requests    %" PRIu64 "\n", r.requests);
  std::printf("hits        %" PRIu64 "\n", r.hits);
  std::printf("misses      %" PRIu64 "\n", r.misses);
  std::printf("hit ratio   %.3f%%\n", 100.0 * r.hit_ratio());
  if (o.policy == sim::SimPolicy::kArc) {
    std::printf("p           %.2f pages (%s)\n", r.p_bytes / static_cast<double>(o.page_bytes),
                FormatBytes(static_cast<uint64_t>(r.p_bytes)).c_str());
    std::printf("mru         %s\n", Pages(r.mru_bytes, o.page_bytes).c_str());
    std::printf("mfu         %s\n", Pages(r.mfu_bytes, o.page_bytes).c_str());
    std::printf("mru_ghost   %s\n", Pages(r.mru_ghost_bytes, o.page_bytes).c_str());
    std::printf("mfu_ghost   %s\n", Pages(r.mfu_ghost_bytes, o.page_bytes).c_str());
  } else {
    std::printf("cached      %" PRIu64 " pages\n", r.resident_pages);
  }
  std::printf("elapsed     %s, %.2fM requests/s\n", FormatDurationNs(r.elapsed_ns).c_str(),
              static_cast<double>(r.requests_per_sec()) / 1e6);
}

sim::SimOptions BaseOptions(const SimArgs& a) {
  sim::SimOptions o;
  o.trace_path = a.trace;
  o.page_bytes = a.page_bytes;
  if (o.page_bytes == 0) throw UsageError("--page-size must be > 0");
  auto format = sim::ParseTraceFormat(a.format);
  if (!format.ok()) throw UsageError(format.status().message());
  o.trace.format = *format;
  o.trace.reads_only = a.reads_only;
  o.trace.page_bytes = a.page_bytes;
  ParseCsvColumns(a.csv_columns, &o.trace);
  return o;
}

std::vector<uint64_t> CacheSizes(const SimArgs& a, const sim::SimOptions& o) {
  auto specs = sim::ParseCacheSizeList(a.cache_size);
  if (!specs.ok()) throw UsageError("--cache-size: " + specs.status().message());
  uint64_t distinct = 0;
  for (const sim::CacheSizeSpec& spec : *specs) {
    if (spec.percent_of_distinct > 0 && distinct == 0) {
      auto d = sim::CountDistinctKeys(o.trace_path, o.trace);
      if (!d.ok()) throw CommandFailed(d.status().ToString());
      distinct = *d;
    }
  }
  std::vector<uint64_t> pages;
  for (const sim::CacheSizeSpec& spec : *specs) {
    auto p = sim::ResolveCacheSize(spec, o.page_bytes, distinct);
    if (!p.ok()) throw UsageError("--cache-size: " + p.status().message());
    pages.push_back(*p);
  }
  return pages;
}

void SetProgress(const SimArgs& a, sim::SimOptions* o, bool* printed) {
  if (!a.progress && ::isatty(STDERR_FILENO) != 1) return;
  o->progress = [printed](const sim::SimProgress& p) {
    double pct = p.file_bytes == 0 ? 100.0 : 100.0 * static_cast<double>(p.file_offset) / static_cast<double>(p.file_bytes);
    double rate = p.elapsed_ns == 0 ? 0 : static_cast<double>(p.requests) * 1e3 / static_cast<double>(p.elapsed_ns);
    std::fprintf(stderr, "\rsim: %.1fM requests, %.1f%% hits, %.0f%% of the file, %.2fM requests/s   ",
                 static_cast<double>(p.requests) / 1e6,
                 p.requests == 0 ? 0.0 : 100.0 * static_cast<double>(p.hits) / static_cast<double>(p.requests),
                 pct, rate);
    *printed = true;
  };
}

void RunSimCommand(const SimArgs& a) {
  sim::SimTableOptions t;
  t.base = BaseOptions(a);
  auto policies = sim::ParsePolicyList(a.policy);
  if (!policies.ok()) throw UsageError("--policy: " + policies.status().message());
  t.policies = *policies;
  t.cache_pages = CacheSizes(a, t.base);
  Status valid = t.Validate();
  if (!valid.ok()) throw UsageError(valid.message());
  // The curve's file is claimed before the runs: a refused path costs none.
  std::optional<ReportSink> json;
  if (!a.json_path.empty()) json.emplace(a.json_path, a.force, "--json");
  bool printed = false;
  SetProgress(a, &t.base, &printed);
  Result<std::vector<sim::SimCell>> cells = sim::RunSimTable(t);
  if (printed) std::fprintf(stderr, "\n");
  if (!cells.ok()) throw CommandFailed(cells.status().ToString());
  if (cells->size() == 1) {
    sim::SimOptions o = t.base;
    o.policy = cells->front().policy;
    o.cache_pages = cells->front().cache_pages;
    PrintText(a, o, cells->front().result);
  } else {
    std::fputs(sim::FormatSimTable(a.trace, t, *cells).c_str(), stdout);
  }
  if (json) json->Write(sim::FormatSimCurveJson(a.trace, t, *cells));
}

}  // namespace

void AddSimCommand(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sim", "Run cache policies (the engine's ARC, references, the optimum) over a block trace");
  cmd->add_option("TRACE", args->trace,
                  "Trace file: ARC paper .lis[.zst], LIRS .trace[.gz], or CSV offset,size[,op]")
      ->required();
  cmd->add_option("--cache-size,-c", args->cache_size,
                  "Cache sizes, comma-separated: pages (one page = one key), bytes with a unit "
                  "(16M), or a percentage of the trace's distinct keys (10%)")
      ->required();
  cmd->add_option("--policy", args->policy, "Policies, comma-separated, or all: arc (the engine's policy, paper mode), lru, "
                  "2q, lirs, s3fifo, wtinylfu, duet (arcstore's own), min (offline optimum; loads the trace)")
      ->capture_default_str();
  cmd->add_option("--page-size", args->page_bytes,
                  "Bytes per page: every simulated buffer's size; CSV requests are split by it")
      ->capture_default_str();
  cmd->add_option("--format", args->format, "auto (from the file name), lis, lirs or csv")
      ->capture_default_str();
  cmd->add_option("--csv-columns", args->csv_columns,
                  "CSV: 0-based columns of OFFSET,SIZE[,OP]; SIZE -1: OFFSET is a page key")
      ->capture_default_str();
  cmd->add_flag("--reads-only", args->reads_only, "CSV: skip write requests (op W..., w... or 1)");
  cmd->add_option("--json", args->json_path,
                  "Write the hit-ratio curve (policy, cache size, requests, hits, ratio) as JSON "
                  "to this new file");
  cmd->add_flag("--force", args->force, "Replace the --json file if it exists");
  cmd->add_flag("--progress", args->progress,
                "Progress line on stderr even when it is not a terminal");
  cmd->callback([args] { RunSimCommand(*args); });
}

}  // namespace arcstore::cli
