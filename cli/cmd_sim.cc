// arcstore sim TRACE --cache-size N: the engine's ARC policy on a block trace.
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "base/units.h"
#include "cli/commands.h"
#include "tools/sim/sim.h"

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
  bool json = false;
  bool progress = false;
};

// "N" pages, or a size with a unit ("16M") divided into pages.
uint64_t ParseCacheSize(const std::string& text, uint64_t page_bytes) {
  bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (digits) return std::stoull(text);
  Result<uint64_t> bytes = ParseSizeBytes(text);
  if (!bytes.ok()) throw CommandFailed("--cache-size: " + bytes.status().message(), 2);
  if (*bytes < page_bytes) throw CommandFailed("--cache-size: less than one page", 2);
  return *bytes / page_bytes;
}

void ParseCsvColumns(const std::string& text, sim::TraceOptions* t) {
  int cols[3] = {-1, -1, -1};
  int n = std::sscanf(text.c_str(), "%d,%d,%d", &cols[0], &cols[1], &cols[2]);
  if (n < 2 || cols[0] < 0 || cols[1] < -1 || cols[0] > 15 || cols[1] > 15 || cols[2] > 15) {
    throw CommandFailed("--csv-columns: want OFFSET,SIZE[,OP] column numbers (0-15; SIZE -1: OFFSET is a page key)", 2);
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
  std::printf("policy      %s, c = %s, pages of %" PRIu64 " B\n", a.policy.c_str(),
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

void PrintJson(const SimArgs& a, const sim::SimOptions& o, const sim::SimResult& r) {
  std::printf(
      "{\"trace\": \"%s\", \"policy\": \"%s\", \"cache_pages\": %" PRIu64 ", \"page_bytes\": %" PRIu64
      ", \"requests\": %" PRIu64 ", \"hits\": %" PRIu64 ", \"misses\": %" PRIu64
      ", \"hits_per_million\": %" PRIu64 ", \"p_bytes\": %" PRIu64 ", \"c_bytes\": %" PRIu64
      ", \"mru_bytes\": %" PRIu64 ", \"mfu_bytes\": %" PRIu64 ", \"mru_ghost_bytes\": %" PRIu64
      ", \"mfu_ghost_bytes\": %" PRIu64 ", \"lines\": %" PRIu64 ", \"elapsed_ns\": %" PRIu64
      ", \"requests_per_sec\": %" PRIu64 "}\n",
      a.trace.c_str(), a.policy.c_str(), o.cache_pages, o.page_bytes, r.requests, r.hits, r.misses,
      r.requests == 0 ? 0 : r.hits * 1000000 / r.requests, static_cast<uint64_t>(r.p_bytes),
      r.c_bytes, r.mru_bytes, r.mfu_bytes, r.mru_ghost_bytes, r.mfu_ghost_bytes, r.lines,
      r.elapsed_ns, r.requests_per_sec());
}

void RunSimCommand(const SimArgs& a) {
  sim::SimOptions o;
  o.trace_path = a.trace;
  o.page_bytes = a.page_bytes;
  if (o.page_bytes == 0) throw CommandFailed("--page-size must be > 0", 2);
  o.cache_pages = ParseCacheSize(a.cache_size, a.page_bytes);
  auto policy = sim::ParseSimPolicy(a.policy);
  if (!policy.ok()) throw CommandFailed(policy.status().message(), 2);
  o.policy = *policy;
  auto format = sim::ParseTraceFormat(a.format);
  if (!format.ok()) throw CommandFailed(format.status().message(), 2);
  o.trace.format = *format;
  o.trace.reads_only = a.reads_only;
  ParseCsvColumns(a.csv_columns, &o.trace);
  const bool show_progress = a.progress || ::isatty(STDERR_FILENO) == 1;
  bool printed = false;
  if (show_progress) {
    o.progress = [&printed](const sim::SimProgress& p) {
      double pct = p.file_bytes == 0 ? 100.0 : 100.0 * static_cast<double>(p.file_offset) / static_cast<double>(p.file_bytes);
      double rate = p.elapsed_ns == 0 ? 0 : static_cast<double>(p.requests) * 1e3 / static_cast<double>(p.elapsed_ns);
      std::fprintf(stderr, "\rsim: %.1fM requests, %.1f%% hits, %.0f%% of the file, %.2fM requests/s   ",
                   static_cast<double>(p.requests) / 1e6,
                   p.requests == 0 ? 0.0 : 100.0 * static_cast<double>(p.hits) / static_cast<double>(p.requests),
                   pct, rate);
      printed = true;
    };
  }
  Result<sim::SimResult> r = sim::RunSim(o);
  if (printed) std::fprintf(stderr, "\n");
  if (!r.ok()) throw CommandFailed(r.status().ToString());
  if (a.json) {
    PrintJson(a, o, *r);
  } else {
    PrintText(a, o, *r);
  }
}

}  // namespace

void AddSimCommand(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sim", "Run the engine's ARC policy (or LRU) over a block trace and count hits");
  cmd->add_option("TRACE", args->trace,
                  "Trace file: ARC paper .lis[.zst], LIRS .trace[.gz], or CSV offset,size[,op]")
      ->required();
  cmd->add_option("--cache-size,-c", args->cache_size,
                  "Cache size in pages (one page = one key), or bytes with a unit (16M)")
      ->required();
  cmd->add_option("--policy", args->policy, "arc (the engine's policy, paper mode) or lru")
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
  cmd->add_flag("--json", args->json, "Print one JSON object of integers (and the names)");
  cmd->add_flag("--progress", args->progress,
                "Progress line on stderr even when it is not a terminal");
  cmd->callback([args] { RunSimCommand(*args); });
}

}  // namespace arcstore::cli
