#include <cstdio>

#include "cli/commands.h"

namespace arcstore::cli {

void AddVersionCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("version", "Print arcstore's version and build");
  cmd->callback([] {
    std::printf("arcstore %s (%s, %s)\n", ARCSTORE_VERSION, ARCSTORE_BUILD_TYPE,
                ARCSTORE_COMPILER);
  });
}

}  // namespace arcstore::cli
