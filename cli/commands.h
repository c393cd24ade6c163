// The arcstore command line: one subcommand per tool, each in its own file.
//
// A subcommand file defines one function that adds its CLI11 subcommand to
// the app and sets its callback. Callbacks report failure by throwing
// CommandFailed (CLI11 is exception-based; this is the one place arcstore
// uses exceptions, and it never crosses into the engine).
#pragma once

#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>

namespace arcstore::cli {

// A subcommand's failure: the message goes to stderr, `exit_code` is the
// process's status.
struct CommandFailed : std::runtime_error {
  CommandFailed(const std::string& message, int exit_code = 1)
      : std::runtime_error(message), exit_code(exit_code) {}
  int exit_code;
};

void AddVersionCommand(CLI::App& app);

}  // namespace arcstore::cli
