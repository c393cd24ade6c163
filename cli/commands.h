// The arcstore command line: one subcommand per tool, each in its own file
// (cli/cmd_<tool>.cc). A subcommand file defines one function that adds its
// CLI11 subcommand(s) to the app and sets the callbacks. Callbacks report
// failure by throwing CommandFailed (CLI11 is exception-based; this is the
// one place arcstore uses exceptions, and it never crosses into the engine).
#pragma once

#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>

#include "base/result.h"
#include "base/units.h"

namespace arcstore::cli {

// Exit codes, the same for every subcommand (README.md, "Exit codes").
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;  // doctor warnings, fsck problems, bench regressions or job errors
inline constexpr int kExitCritical = 2;  // doctor critical findings
inline constexpr int kExitFailed = 3;    // the command could not do its work (I/O, busy, refused)
inline constexpr int kExitUsage = 64;    // a bad option or argument (sysexits' EX_USAGE)
inline constexpr int kExitNoInput = 66;  // input missing, unreadable, or not what it must be

// A subcommand's failure: the message goes to stderr, `exit_code` is the
// process's status.
struct CommandFailed : std::runtime_error {
  CommandFailed(const std::string& message, int exit_code = kExitFailed)
      : std::runtime_error(message), exit_code(exit_code) {}
  int exit_code;
};

// A bad option or argument, and input that is missing or not what it must be.
inline CommandFailed UsageError(const std::string& message) {
  return CommandFailed(message, kExitUsage);
}
inline CommandFailed NoInput(const std::string& message) {
  return CommandFailed(message, kExitNoInput);
}

// The value of `r`, or CommandFailed "what: message".
template <typename T>
T OrFail(Result<T> r, const std::string& what) {
  if (!r.ok()) throw CommandFailed(what + ": " + r.status().message());
  return std::move(*r);
}

// The bytes of a size option ("64M", "1G", "4096"); a usage error naming
// the option and the text otherwise.
inline uint64_t SizeArg(const std::string& option, const std::string& text) {
  Result<uint64_t> r = ParseSizeBytes(text);
  if (!r.ok()) throw UsageError(option + ": " + r.status().message());
  return *r;
}

// A subcommand that succeeded but wants a non-zero status (doctor's verdict,
// bench --compare's regression): main exits with `exit_code` and prints
// nothing more.
struct CommandExit {
  int exit_code;
};

void AddVersionCommand(CLI::App& app);
void AddSimCommand(CLI::App& app);           // cmd_sim.cc: arcstore sim
void AddDoctorCommands(CLI::App& app);       // cmd_doctor.cc: doctor, summary
void AddBenchCommand(CLI::App& app);         // cmd_bench.cc: arcstore bench
void AddServeCommand(CLI::App& app);         // cmd_serve.cc: arcstore serve
void AddPoolCommands(CLI::App& app);         // cmd_pool.cc: pool, vol, fsck
void AddStatCommands(CLI::App& app);         // cmd_stat.cc: stat, iostat, txgs
void AddTraceCommands(CLI::App& app);        // cmd_trace.cc: trace, plot

}  // namespace arcstore::cli
