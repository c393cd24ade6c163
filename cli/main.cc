// arcstore: the command-line front end. See README.md for the subcommands.
#include <cstdio>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"arcstore: a user-space block storage engine with a ZFS-style ARC"};
  app.require_subcommand(1);
  app.fallthrough(false);
  arcstore::cli::AddVersionCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const arcstore::cli::CommandFailed& e) {
    std::fprintf(stderr, "arcstore: %s\n", e.what());
    return e.exit_code;
  }
  return 0;
}
