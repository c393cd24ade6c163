// arcstore stat, iostat and txgs: a pool's live numbers, from a running
// server's control socket or the pool opened in-process (cli/observe.h).
//
//   arcstore stat POOL [-f FIELDS] [-x] [-a] [-v] [--json] [INTERVAL [COUNT]]
//   arcstore iostat POOL [-l] [-w] [-r] [-q] [INTERVAL [COUNT]]
//   arcstore txgs POOL [--json]
//
// stat --json prints one stats snapshot per line (stats/wire.h), the first
// at once and, with INTERVAL, one per interval after it (COUNT of them):
// the samples `arcstore plot arc` and `plot throttle` read. Without
// INTERVAL it prints the one snapshot and returns (the text columns wait
// one second, for the rates of their first row).
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/observe.h"
#include "stats/wire.h"
#include "tools/iostat/iostat.h"
#include "tools/stat/arcstat.h"
#include "tools/txgs/txgs.h"

namespace arcstore::cli {
namespace {

std::string LastSyncReason(tools::StatsSource& source) {
  Result<std::vector<tools::TxgRow>> rows = source.TxgHistory();
  if (!rows.ok()) return "";
  for (auto it = rows->rbegin(); it != rows->rend(); ++it) {
    if (it->state == "C") return it->reason;
  }
  return "";
}

void AddStat(CLI::App& app) {
  struct Args {
    SourceArgs source;
    Sampling sampling;
    std::string fields;
    bool extended = false, arcstore = false, describe = false, json = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("stat", "arcstat's columns for a pool, live (plus arcstore's fields)");
  cmd->add_option("POOL", a->source.pool, "pool file or block device");
  cmd->add_option("-f", a->fields, "comma-separated fields (see -v)");
  cmd->add_flag("-x", a->extended, "extended fields: " + std::string(tools::kExtendedFields));
  cmd->add_flag("-a", a->arcstore, "arcstore's fields: " + std::string(tools::kArcstoreFields));
  cmd->add_flag("-v", a->describe, "list the fields and their meanings");
  cmd->add_flag("--json", a->json, "print one stats snapshot (JSON) per line: samples for arcstore plot");
  AddSourceOptions(cmd, &a->source);
  AddSamplingOptions(cmd, &a->sampling);
  cmd->callback([a] {
    if (a->describe) return Print(tools::DescribeStatFields());
    SettlePositionals(&a->source, &a->sampling);
    std::string list = a->fields.empty() ? std::string(a->extended   ? tools::kExtendedFields
                                                       : a->arcstore ? tools::kArcstoreFields
                                                                     : tools::kDefaultFields)
                                         : a->fields;
    auto fields = OrFail(tools::ParseStatFields(list), "stat");
    tools::OpenedSource src = OpenSource(a->source);
    if (a->json) {
      Print(stats::ToWireJson(OrFail(src.source->TakeSnapshot(), "stat")) + "\n");
      if (a->sampling.interval_s <= 0) return;
      SampleLoop(*src.source, a->sampling, [](const stats::Snapshot&, const stats::Snapshot& cur, double) {
        Print(stats::ToWireJson(cur) + "\n");
      });
      return;
    }
    bool wants_sync = list.find("sync") != std::string::npos;
    tools::StatPrinter printer(fields);
    SampleLoop(*src.source, a->sampling, [&](const stats::Snapshot& prev, const stats::Snapshot& cur, double s) {
      stats::Snapshot delta = stats::Delta(prev, cur);
      std::string reason = wants_sync ? LastSyncReason(*src.source) : "";
      Print(printer.Next({&delta, &cur, s, WallClockHms(), reason}));
    });
  });
}

void AddIostat(CLI::App& app) {
  struct Args {
    SourceArgs source;
    Sampling sampling;
    tools::IostatOptions options;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("iostat", "The pool's device I/O as zpool iostat shows it");
  cmd->add_option("POOL", a->source.pool, "pool file or block device");
  cmd->add_flag("-l", a->options.latency, "average latency columns (total, disk, sync/async queue)");
  cmd->add_flag("-w", a->options.histograms, "latency histograms, and brw_stats' I/O time table");
  cmd->add_flag("-r", a->options.sizes, "request size histograms, individual vs aggregated");
  cmd->add_flag("-q", a->options.queues, "queue depths per class, and brw_stats' in-flight table");
  AddSourceOptions(cmd, &a->source);
  AddSamplingOptions(cmd, &a->sampling);
  cmd->callback([a] {
    SettlePositionals(&a->source, &a->sampling);
    tools::OpenedSource src = OpenSource(a->source);
    a->options.pool_name = a->source.pool.empty() ? "pool" : a->source.pool.substr(a->source.pool.rfind('/') + 1);
    // The cache devices open now, each a row under the pool's.
    for (const PoolInfo::CacheDevice& d : OrFail(src.source->Info(), "iostat").cache_devices) {
      if (d.stats_module.empty()) continue;
      a->options.cache_devices.push_back({d.path.substr(d.path.rfind('/') + 1), d.stats_module, d.size_bytes});
    }
    uint64_t n = 0;
    SampleLoop(*src.source, a->sampling, [&](const stats::Snapshot& prev, const stats::Snapshot& cur, double s) {
      stats::Snapshot delta = stats::Delta(prev, cur);
      tools::IostatOptions o = a->options;
      // Like zpool iostat: the header once, unless histograms follow each row.
      o.header = n++ == 0 || o.histograms || o.sizes || o.queues;
      Print(tools::RenderIostat({&delta, &cur, s}, o));
    });
  });
}

void AddTxgs(CLI::App& app) {
  struct Args {
    SourceArgs source;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("txgs", "The txg history with sync reasons and throttle time");
  cmd->add_option("POOL", a->source.pool, "pool file or block device");
  cmd->add_flag("--json", a->json, "print the rows as JSON");
  AddSourceOptions(cmd, &a->source);
  cmd->callback([a] {
    tools::OpenedSource src = OpenSource(a->source);
    auto rows = OrFail(src.source->TxgHistory(), "txgs");
    Print(a->json ? tools::TxgRowsToJson(rows).dump(2) + "\n" : tools::RenderTxgs(rows));
  });
}

}  // namespace

void AddStatCommands(CLI::App& app) {
  AddStat(app);
  AddIostat(app);
  AddTxgs(app);
}

}  // namespace arcstore::cli
