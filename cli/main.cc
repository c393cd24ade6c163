// arcstore: the command-line front end. See README.md for the subcommands.
#include <cstdio>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"arcstore: a user-space block storage engine with a ZFS-style ARC"};
  app.require_subcommand(1);
  arcstore::cli::AddVersionCommand(app);
#ifdef ARCSTORE_HAVE_SIM
  arcstore::cli::AddSimCommand(app);
#endif
#ifdef ARCSTORE_HAVE_DOCTOR
  arcstore::cli::AddDoctorCommands(app);
#endif
#ifdef ARCSTORE_HAVE_BENCH
  arcstore::cli::AddBenchCommand(app);
#endif
#ifdef ARCSTORE_HAVE_SERVE
  arcstore::cli::AddServeCommand(app);
#endif
#ifdef ARCSTORE_HAVE_POOL
  arcstore::cli::AddPoolCommands(app);
#endif
#ifdef ARCSTORE_HAVE_STAT
  arcstore::cli::AddStatCommands(app);
#endif
#ifdef ARCSTORE_HAVE_PLOT
  arcstore::cli::AddTraceCommands(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int cli11_code = app.exit(e);  // prints the message or the help
    return cli11_code == 0 ? arcstore::cli::kExitOk : arcstore::cli::kExitUsage;
  } catch (const arcstore::cli::CommandFailed& e) {
    std::fprintf(stderr, "arcstore: %s\n", e.what());
    return e.exit_code;
  } catch (const arcstore::cli::CommandExit& e) {
    return e.exit_code;
  }
  return 0;
}
