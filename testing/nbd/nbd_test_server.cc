// nbd_test_server: FOR TESTS ONLY. Serves in-memory volumes
// (testing::MemoryVolume, nothing persisted) through the NBD server, so that
// end-to-end tests and benchmarks can drive the protocol layer with real
// clients before (and independently of) the engine. `arcstore serve` is the
// real server.
//
//   nbd_test_server --socket /tmp/s.sock --export vol0:256M:128K [--export ro:1M:4K:ro]
//                   [--listen 127.0.0.1:0] [--threads N] [--max-connections N]
//                   [--max-in-flight N] [--max-payload BYTES] [--stats]
//
// Prints "ready ADDRESS" on stdout once clients can connect; SIGINT or
// SIGTERM shut it down cleanly (exit status 0). --threads N completes volume
// operations on N worker threads (out-of-order replies) instead of inline.
// --stats prints the server's stats (kstat text) on stderr at exit.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/units.h"
#include "nbd/server.h"
#include "stats/registry.h"
#include "testing/memory_volume.h"
#include "testing/nbd/threaded_volume.h"

namespace arcstore::nbd {
namespace {

Result<Export> ParseExport(const std::string& spec, int threads) {
  std::vector<std::string> f;
  size_t start = 0;
  while (true) {
    size_t colon = spec.find(':', start);
    f.push_back(spec.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (f.size() < 3 || f.size() > 4 || (f.size() == 4 && f[3] != "ro")) {
    return Status::InvalidArgument("--export " + spec + ": want NAME:SIZE:RECORDSIZE[:ro]");
  }
  ARC_ASSIGN_OR_RETURN(uint64_t size, ParseSizeBytes(f[1]));
  ARC_ASSIGN_OR_RETURN(uint64_t record, ParseSizeBytes(f[2]));
  VolumeInfo info;
  info.name = f[0];
  info.size_bytes = size;
  info.record_size_bytes = static_cast<uint32_t>(record);
  std::shared_ptr<Volume> v = std::make_shared<testing::MemoryVolume>(info);
  if (threads > 0) v = std::make_shared<ThreadedVolume>(v, threads);
  Export e;
  e.name = f[0];
  e.volume = v;
  e.read_only = f.size() == 4;
  e.description = "in-memory test volume " + f[1] + ", records of " + f[2];
  return e;
}

int Run(int argc, char** argv) {
  CLI::App app{"nbd_test_server: in-memory volumes over NBD, for tests only"};
  ServerOptions o;
  std::vector<std::string> specs;
  int threads = 0;
  bool print_stats = false;
  std::string max_payload;
  std::string tls_mode = "off";
  app.add_option("--socket", o.socket_path, "unix socket path");
  app.add_option("--listen", o.listen_addresses, "HOST:PORT or [IPV6]:PORT (repeatable)");
  app.add_flag("--insecure", o.allow_insecure_network, "allow plaintext beyond loopback");
  app.add_option("--tls", tls_mode, "off, on or require");
  app.add_option("--tls-certificates", o.tls.certificates_dir, "X.509 directory");
  app.add_flag("--tls-verify-peer", o.tls.verify_peer, "require client certificates");
  app.add_option("--tls-psk", o.tls.psk_file, "psktool file");
  app.add_option("--access", o.access_file, "access file (access.h); SIGHUP reloads it");
  app.add_option("--handshake-timeout-ms", o.handshake_timeout_ns, "handshake deadline")
      ->transform([](std::string v) { return std::to_string(std::stoull(v) * 1000000); });
  app.add_option("--max-handshakes", o.max_handshakes, "connections in their handshake at once");
  app.add_option("--export", specs, "NAME:SIZE:RECORDSIZE[:ro]")->required();
  app.add_option("--threads", threads, "complete volume operations on N threads");
  app.add_option("--max-connections", o.max_connections);
  app.add_option("--max-in-flight", o.max_in_flight_per_connection);
  app.add_option("--max-payload", max_payload, "maximum payload, e.g. 32M");
  app.add_flag("--stats", print_stats, "print stats on stderr at exit");
  bool no_inline = false;
  app.add_flag("--no-inline", no_inline,
               "every request goes through Submit* (ServerOptions::inline_idle_requests off)");
  CLI11_PARSE(app, argc, argv);
  o.inline_idle_requests = !no_inline;
  // Every client turned away for who it is, one line on stdout for the
  // end-to-end tests to check (arcstore serve logs them, rate-limited).
  o.on_security_refusal = [](const std::string& peer, const std::string& why) {
    std::printf("refused %s: %s\n", peer.c_str(), why.c_str());
    std::fflush(stdout);
  };
  Result<TlsMode> mode = ParseTlsMode(tls_mode);
  if (!mode.ok()) {
    std::fprintf(stderr, "nbd_test_server: --tls: %s\n", mode.status().message().c_str());
    return 2;
  }
  o.tls.mode = *mode;
  if (!max_payload.empty()) {
    Result<uint64_t> mp = ParseSizeBytes(max_payload);
    if (!mp.ok() || *mp > UINT32_MAX) {
      std::fprintf(stderr, "nbd_test_server: bad --max-payload %s\n", max_payload.c_str());
      return 2;
    }
    o.max_payload_bytes = static_cast<uint32_t>(*mp);
  }
  std::vector<Export> exports;
  for (const std::string& s : specs) {
    Result<Export> e = ParseExport(s, threads);
    if (!e.ok()) {
      std::fprintf(stderr, "nbd_test_server: %s\n", e.status().ToString().c_str());
      return 2;
    }
    exports.push_back(*e);
  }
  // Signals are taken synchronously by this thread; block them before any
  // other thread starts so that none of those receives them.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  stats::Registry registry;
  Result<std::unique_ptr<Server>> server = Server::Start(o, exports, &registry);
  if (!server.ok()) {
    std::fprintf(stderr, "nbd_test_server: %s\n", server.status().ToString().c_str());
    return 1;
  }
  for (const std::string& a : (*server)->addresses()) std::printf("listening %s\n", a.c_str());
  std::printf("ready %s\n", (*server)->address().c_str());
  std::fflush(stdout);
  int sig = 0;
  while (sigwait(&sigs, &sig) == 0 && sig == SIGHUP) {
    Status reloaded = (*server)->ReloadAccess();
    if (reloaded.ok()) {
      std::printf("access reloaded\n");
    } else {
      std::printf("access reload failed, keeping the old policy: %s\n",
                  reloaded.message().c_str());
    }
    std::fflush(stdout);
  }
  (*server)->Shutdown();
  if (print_stats) {
    std::fprintf(stderr, "%s", stats::ToKstatText(registry.TakeSnapshot()).c_str());
  }
  server->reset();
  return 0;
}

}  // namespace
}  // namespace arcstore::nbd

int main(int argc, char** argv) { return arcstore::nbd::Run(argc, argv); }
