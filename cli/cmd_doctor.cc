// arcstore doctor and arcstore summary: diagnose an ARC from its statistics.
//
//   arcstore doctor --arcstats FILE|- [--json]   findings; exit 0 healthy/info,
//                                                1 warnings, 2 critical
//   arcstore summary --arcstats FILE|- [--json]  arc_summary-style report
//
// FILE is any dump src/tools/doctor/arcstats_reader.h reads (Linux kstat,
// illumos kstat, FreeBSD sysctl, arc_summary). --pool and --live arrive with
// the engine; they are refused with a clear message until then.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "tools/doctor/arcstats_reader.h"
#include "tools/doctor/doctor.h"
#include "tools/doctor/report_format.h"
#include "tools/doctor/summary.h"

namespace arcstore::cli {
namespace {

std::string ReadInput(const std::string& path) {
  std::string text;
  const size_t limit = doctor::kMaxArcStatsInputBytes + 1;
  auto slurp = [&](std::istream& in) {
    char buf[65536];
    while (text.size() < limit && (in.read(buf, sizeof(buf)) || in.gcount() > 0))
      text.append(buf, static_cast<size_t>(in.gcount()));
    if (in.bad()) throw CommandFailed(path + ": read failed");
  };
  if (path == "-") {
    slurp(std::cin);
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw CommandFailed(path + ": cannot open");
    slurp(in);
  }
  return text;
}

doctor::StatsView ReadView(const std::string& path) {
  auto view = doctor::ReadArcStats(ReadInput(path));
  if (!view.ok()) throw CommandFailed((path == "-" ? "stdin" : path) + ": " + view.status().message());
  return std::move(*view);
}

void RefuseEngineModes(const std::string& pool, bool live) {
  if (!pool.empty() || live)
    throw CommandFailed("--pool and --live need the arcstore engine, which is not built yet; "
                        "use --arcstats FILE");
}

void AddDoctor(CLI::App& app) {
  struct Args {
    std::string arcstats, pool;
    bool live = false, json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Name the pathology of an ARC from its statistics (OpenZFS, illumos or arcstore)");
  cmd->add_option("--arcstats", args->arcstats,
                  "arcstats dump: /proc/spl/kstat/zfs/arcstats, kstat -m/-p, sysctl or "
                  "arc_summary output; '-' for stdin");
  cmd->add_option("--pool", args->pool, "an arcstore pool (when the engine exists)");
  cmd->add_flag("--live", args->live, "the running arcstore server (when the engine exists)");
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([args] {
    RefuseEngineModes(args->pool, args->live);
    if (args->arcstats.empty()) throw CommandFailed("doctor needs --arcstats FILE (or '-')");
    doctor::Report report = doctor::Diagnose(ReadView(args->arcstats));
    std::string out = args->json ? doctor::RenderJson(report) + "\n" : doctor::RenderText(report);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (report.ExitCode() != 0) throw CommandExit{report.ExitCode()};
  });
}

void AddSummary(CLI::App& app) {
  struct Args {
    std::string arcstats;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("summary", "An arc_summary-style report of ARC statistics");
  cmd->add_option("--arcstats", args->arcstats, "arcstats dump (any format doctor reads); '-' for stdin")
      ->required();
  cmd->add_flag("--json", args->json, "print the normalized statistics as JSON");
  cmd->callback([args] {
    doctor::StatsView view = ReadView(args->arcstats);
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
