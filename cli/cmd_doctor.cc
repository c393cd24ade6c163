// arcstore doctor and arcstore summary: diagnose an ARC from its statistics.
//
//   arcstore doctor --arcstats FILE|- [--json]   findings; exit 0 healthy/info,
//   arcstore doctor --pool POOL [--live]         1 warnings, 2 critical (the
//   arcstore doctor --control PATH               codes of cli/commands.h)
//   arcstore summary --arcstats FILE|- [--json]  arc_summary-style report
//   arcstore summary POOL [--live]               ... of an arcstore pool
//
// FILE is any dump src/tools/doctor/arcstats_reader.h reads (Linux kstat,
// illumos kstat, FreeBSD sysctl, arc_summary). POOL is read through its
// server's control socket when one serves it, else opened in-process
// (cli/observe.h); --live insists on the server.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/observe.h"
#include "tools/doctor/arcstats_reader.h"
#include "tools/doctor/doctor.h"
#include "tools/doctor/report_format.h"
#include "tools/doctor/summary.h"
#include "tools/summary/pool_summary.h"

namespace arcstore::cli {
namespace {

std::string ReadInput(const std::string& path) {
  std::string text;
  const size_t limit = doctor::kMaxArcStatsInputBytes + 1;
  auto slurp = [&](std::istream& in) {
    char buf[65536];
    while (text.size() < limit && (in.read(buf, sizeof(buf)) || in.gcount() > 0))
      text.append(buf, static_cast<size_t>(in.gcount()));
    if (in.bad()) throw NoInput(path + ": read failed");
  };
  if (path == "-") {
    slurp(std::cin);
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw NoInput(path + ": cannot open: " + std::strerror(errno));
    slurp(in);
  }
  return text;
}

doctor::StatsView ReadView(const std::string& path) {
  auto view = doctor::ReadArcStats(ReadInput(path));
  if (!view.ok()) throw NoInput((path == "-" ? "stdin" : path) + ": " + view.status().message());
  return std::move(*view);
}

// A pool's (or a live server's) stats as the doctor's view.
doctor::StatsView PoolView(const SourceArgs& source) {
  tools::OpenedSource src = OpenSource(source);
  return doctor::FromSnapshot(OrFail(src.source->TakeSnapshot(), src.source->Describe()));
}

void AddDoctor(CLI::App& app) {
  struct Args {
    std::string arcstats;
    SourceArgs source;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Name the pathology of an ARC from its statistics (OpenZFS, illumos or arcstore)");
  cmd->add_option("--arcstats", args->arcstats,
                  "arcstats dump: /proc/spl/kstat/zfs/arcstats, kstat -m/-p, sysctl or "
                  "arc_summary output; '-' for stdin");
  cmd->add_option("--pool", args->source.pool,
                  "an arcstore pool: its server's stats (control socket) or the pool opened read-only");
  AddSourceOptions(cmd, &args->source);
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([args] {
    bool engine = !args->source.pool.empty() || args->source.live || !args->source.control.empty();
    if (engine == !args->arcstats.empty()) {
      throw UsageError("doctor needs one of --arcstats FILE (or '-'), --pool POOL [--live], "
                       "--control PATH");
    }
    doctor::Report report =
        doctor::Diagnose(engine ? PoolView(args->source) : ReadView(args->arcstats));
    std::string out = args->json ? doctor::RenderJson(report) + "\n" : doctor::RenderText(report);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (report.ExitCode() != 0) throw CommandExit{report.ExitCode()};
  });
}

void AddSummary(CLI::App& app) {
  struct Args {
    std::string arcstats;
    SourceArgs source;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("summary", "An arc_summary-style report of ARC statistics");
  cmd->add_option("POOL", args->source.pool, "an arcstore pool (or give --arcstats)");
  cmd->add_option("--arcstats", args->arcstats, "arcstats dump (any format doctor reads); '-' for stdin");
  AddSourceOptions(cmd, &args->source);
  cmd->add_flag("--json", args->json, "print the normalized statistics as JSON");
  cmd->callback([args] {
    bool engine = !args->source.pool.empty() || args->source.live || !args->source.control.empty();
    if (engine == !args->arcstats.empty()) {
      throw UsageError("summary needs POOL (or --control PATH) or --arcstats FILE (or '-'), "
                       "not both");
    }
    if (engine && !args->json) {
      tools::OpenedSource src = OpenSource(args->source);
      stats::Snapshot snap = OrFail(src.source->TakeSnapshot(), src.source->Describe());
      std::vector<tools::TxgRow> rows = OrFail(src.source->TxgHistory(), src.source->Describe());
      return Print(tools::RenderPoolSummary(snap, rows));
    }
    doctor::StatsView view = engine ? PoolView(args->source) : ReadView(args->arcstats);
    std::string out;
    if (args->json) {
      nlohmann::ordered_json j;
      j["format"] = std::string(doctor::FormatName(view.format));
      j["field_set"] = std::string(doctor::FieldSetName(view.field_set));
      j["values"] = view.values;
      j["approximate"] = view.approximate;
      j["notes"] = view.notes;
      out = j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    } else {
      out = doctor::RenderSummary(view);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
  });
}

}  // namespace

void AddDoctorCommands(CLI::App& app) {
  AddDoctor(app);
  AddSummary(app);
}

}  // namespace arcstore::cli
