// arcstore serve POOL: the pool's volumes over NBD (src/nbd/server.h).
//
//   arcstore serve POOL [--socket PATH] [--listen HOST:PORT ...]
//                       [--tls off|on|require] [--tls-certificates DIR]
//                       [--tls-verify-peer] [--tls-psk FILE] [--access FILE]
//                       [--insecure]
//                       [--export VOL ...] [--read-only] [--max-connections N]
//                       [--max-in-flight N] [--max-payload SIZE] [--socket-mode MODE]
//                       [--sync-nice N] [--sync-kick PERCENT]
//                       [--poll-us N] [--max-pollers N]
//                       [--control PATH | --no-control] [--metrics 127.0.0.1:PORT]
//
// The control socket (default POOL.ctl) answers the observability tools
// (stat, iostat, txgs, summary, doctor --live, trace) without stopping the
// server; --metrics serves Prometheus text on GET /metrics
// (src/tools/source/control.h). Both stop before the pool closes.
//
// Every volume is exported under its own name unless --export narrows the
// set. SIGINT and SIGTERM stop accepting, let in-flight requests finish,
// close the pool (which syncs it) and exit with status 0. SIGHUP re-reads
// the access file: new handshakes use it, open connections keep what they
// negotiated, and a file with an error is logged and the old one kept.
//
// A --listen address beyond loopback is refused unless --tls require (see
// docs/serving.md), or --insecure, which then warns at every start.
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "arcstore/pool.h"
#include "base/units.h"
#include "cli/commands.h"
#include "net/listen.h"
#include "nbd/server.h"
#include "stats/machine_stalls.h"
#include "tools/source/control.h"
#include "tools/source/socket_server.h"

namespace arcstore::cli {
namespace {

struct ServeArgs {
  std::string pool_path;
  std::vector<std::string> exports;
  bool read_only = false;
  bool no_intent_log = false;
  std::string arc_max;
  std::string arc_policy = "arc";
  std::string arc_pretouch;
  std::string arc_grow_ahead;
  std::string io_backend = "auto";
  // The server's threads wait on clients; the sync runs in their idle time
  // (PoolOptions::txg_sync_nice).
  int sync_nice = 19;
  uint32_t sync_kick = PoolOptions().txg_sync_kick_percent;
  // A server's connection threads poll for their client's next request
  // before they sleep (ServerOptions::poll_window_ns).
  uint64_t poll_us = 50;
  std::string max_payload;
  std::string socket_mode = "0600";
  bool print_stats = false;
  std::string control_path;  // empty: POOL.ctl
  bool no_control = false;
  std::string metrics_address;
  std::string tls_mode = "off";
  nbd::ServerOptions server;
};

// The control socket and the metrics endpoint over the pool's stats.
struct Observers {
  std::unique_ptr<tools::PoolStatsSource> source;
  std::unique_ptr<tools::SocketServer> control, metrics;
};

Observers StartObservers(Pool& pool, const ServeArgs& a) {
  Observers o;
  o.source = std::make_unique<tools::PoolStatsSource>(&pool, a.pool_path);
  tools::StatsSource* src = o.source.get();
  if (!a.no_control) {
    tools::SocketServerOptions so;
    so.unix_path = a.control_path.empty() ? tools::DefaultControlPath(a.pool_path) : a.control_path;
    auto s = tools::SocketServer::Start(
        so, [src, t = so.io_timeout_ms](int fd) { tools::ServeControlConnection(*src, fd, t); });
    if (!s.ok()) throw CommandFailed("serve --control: " + s.status().ToString());
    o.control = std::move(*s);
  }
  if (!a.metrics_address.empty()) {
    tools::SocketServerOptions so;
    so.listen_address = a.metrics_address;
    auto s = tools::SocketServer::Start(
        so, [src, t = so.io_timeout_ms](int fd) { tools::ServeMetricsConnection(*src, fd, t); });
    if (!s.ok()) throw CommandFailed("serve --metrics: " + s.status().ToString());
    o.metrics = std::move(*s);
  }
  return o;
}

nbd::ServerOptions ServerOptionsFrom(const ServeArgs& a) {
  nbd::ServerOptions o = a.server;
  if (o.socket_path.empty() && o.listen_addresses.empty()) {
    throw CommandFailed("serve: give --socket PATH and/or --listen HOST:PORT");
  }
  Result<nbd::TlsMode> tls_mode = nbd::ParseTlsMode(a.tls_mode);
  if (!tls_mode.ok()) throw CommandFailed("--tls: " + tls_mode.status().message());
  o.tls.mode = *tls_mode;
  if (!a.max_payload.empty()) {
    const uint64_t mp = SizeArg("--max-payload", a.max_payload);
    if (mp > UINT32_MAX) throw UsageError("--max-payload: " + a.max_payload + " is over 4 GiB");
    o.max_payload_bytes = static_cast<uint32_t>(mp);
  }
  char* end = nullptr;
  unsigned long mode = std::strtoul(a.socket_mode.c_str(), &end, 8);
  if (a.socket_mode.empty() || *end != '\0') {
    throw CommandFailed("--socket-mode: not an octal mode: " + a.socket_mode);
  }
  o.socket_mode = static_cast<uint32_t>(mode);
  if (a.poll_us > 1000) throw CommandFailed("--poll-us: " + std::to_string(a.poll_us) +
                                            " is more than 1000 (1 ms)");
  o.poll_window_ns = a.poll_us * 1000;
  Status s = o.Validate();
  if (!s.ok()) throw CommandFailed(s.message());
  return o;
}

// The volumes to serve: --export's, or every volume of the pool. Refuses a
// name the pool does not have, or a pool with no volume.
std::vector<std::string> ExportNames(const PoolInfo& info, const ServeArgs& a) {
  std::vector<std::string> names = a.exports;
  if (names.empty()) {
    for (const VolumeInfo& v : info.volumes) names.push_back(v.name);
  }
  if (names.empty()) throw CommandFailed("pool " + a.pool_path + " has no volumes to serve");
  for (const std::string& name : names) {
    bool found = false;
    for (const VolumeInfo& v : info.volumes) found = found || v.name == name;
    if (!found) throw CommandFailed("--export " + name + ": no volume named '" + name + "' in " + a.pool_path);
  }
  return names;
}

std::vector<nbd::Export> OpenExports(Pool& pool, const ServeArgs& a) {
  const std::vector<std::string> names = ExportNames(pool.Info(), a);
  std::vector<nbd::Export> out;
  for (const std::string& name : names) {
    Result<std::shared_ptr<Volume>> v = pool.OpenVolume(name);
    if (!v.ok()) throw CommandFailed("--export " + name + ": " + v.status().ToString());
    VolumeInfo vi = (*v)->info();
    out.push_back({name, *v, a.read_only,
                   "arcstore volume, " + FormatBytes(vi.size_bytes) + ", records of " +
                       FormatBytesShort(vi.record_size_bytes)});
  }
  return out;
}

// --insecure with an address beyond loopback: say so at every start.
void WarnIfInsecure(const nbd::ServerOptions& o) {
  if (o.tls.mode == nbd::TlsMode::kRequire) return;
  for (const std::string& text : o.listen_addresses) {
    Result<net::TcpAddress> a = net::ParseTcpAddress(text);
    if (a.ok() && !a->loopback) {
      std::fprintf(stderr,
                   "arcstore serve: WARNING: --insecure: %s is reachable beyond this machine "
                   "without TLS; anyone who reaches it can read and write the volumes\n",
                   text.c_str());
    }
  }
}

// One line on stderr per client turned away for who it is (a failed TLS
// handshake, a denied volume), at most kLines per window: a flood of bad
// clients costs a line a window saying how many went unlogged, and the
// stats (nbd.tls_fail_*, nbd.err_denied_volume) count every one.
class RefusalLog {
 public:
  static constexpr int kLines = 20;
  static constexpr auto kWindow = std::chrono::seconds(10);

  void Log(const std::string& peer, const std::string& why) {
    std::lock_guard<std::mutex> l(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start_ >= kWindow) {
      if (unlogged_ > 0) {
        std::fprintf(stderr, "arcstore serve: %llu more refusals were not logged\n",
                     static_cast<unsigned long long>(unlogged_));
      }
      window_start_ = now;
      lines_ = 0;
      unlogged_ = 0;
    }
    if (lines_ >= kLines) {
      unlogged_++;
      return;
    }
    lines_++;
    std::fprintf(stderr, "arcstore serve: refused %s: %s\n", peer.c_str(), Printable(why).c_str());
  }

 private:
  // The client chose some of these bytes (a certificate subject, a volume
  // name): control characters are not echoed to the log.
  static std::string Printable(const std::string& text) {
    std::string out;
    for (unsigned char c : text) out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
    return out;
  }

  std::mutex mu_;
  std::chrono::steady_clock::time_point window_start_{};
  int lines_ = 0;
  uint64_t unlogged_ = 0;
};

// SIGHUP: re-read the access file; on error the old policy stays.
void ReloadAccess(nbd::Server& server) {
  Status s = server.ReloadAccess();
  if (s.ok()) {
    std::fprintf(stderr, "arcstore serve: SIGHUP: access file reloaded\n");
  } else {
    std::fprintf(stderr, "arcstore serve: SIGHUP: access file not reloaded, the previous one "
                 "stays in force: %s\n", s.message().c_str());
  }
}

void Serve(const ServeArgs& a) {
  nbd::ServerOptions options = ServerOptionsFrom(a);
  auto refusals = std::make_shared<RefusalLog>();
  options.on_security_refusal = [refusals](const std::string& peer, const std::string& why) {
    refusals->Log(peer, why);
  };
  // Signals are taken synchronously below; block them before the engine
  // starts its threads, which inherit the mask.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  PoolOptions po;
  po.read_only = a.read_only;
  po.intent_log = !a.no_intent_log;
  po.io.backend = a.io_backend;
  po.txg_sync_nice = a.sync_nice;
  po.txg_sync_kick_percent = a.sync_kick;
  if (!a.arc_max.empty()) po.arc_max_bytes = SizeArg("--arc-max", a.arc_max);
  po.arc_policy = a.arc_policy;
  if (!a.arc_pretouch.empty()) po.arc_pretouch_bytes = SizeArg("--arc-pretouch", a.arc_pretouch);
  if (!a.arc_grow_ahead.empty()) {
    po.arc_grow_ahead_bytes = SizeArg("--arc-grow-ahead", a.arc_grow_ahead);
  }
  if (!a.read_only) {
    // A writable open rewrites the pool at Close: check the exports on a
    // read-only open first, so that a refused command changes nothing.
    PoolOptions ro = po;
    ro.read_only = true;
    Result<std::unique_ptr<Pool>> peek = Pool::Open(a.pool_path, ro);
    if (!peek.ok()) {
      throw CommandFailed("cannot open pool " + a.pool_path + ": " + peek.status().ToString());
    }
    ExportNames((*peek)->Info(), a);
  }
  Result<std::unique_ptr<Pool>> pool = Pool::Open(a.pool_path, po);
  if (!pool.ok()) {
    throw CommandFailed("cannot open pool " + a.pool_path + ": " + pool.status().ToString());
  }
  std::vector<nbd::Export> exports = OpenExports(**pool, a);
  Result<std::unique_ptr<nbd::Server>> server =
      nbd::Server::Start(options, exports, &(*pool)->stats());
  if (!server.ok()) throw CommandFailed("serve: " + server.status().ToString());
  // The machine's stalls in the pool's stats (module machine), for stat,
  // the metrics and doctor.
  Result<std::unique_ptr<stats::MachineStallMonitor>> stalls =
      stats::MachineStallMonitor::Start(StallOptions{}, DefaultClock(), &(*pool)->stats());
  if (!stalls.ok()) throw CommandFailed("serve: stall watch: " + stalls.status().ToString());
  Observers observers = StartObservers(**pool, a);
  WarnIfInsecure(options);
  std::printf("serving %zu volume(s) of %s on %s\n", exports.size(), a.pool_path.c_str(),
              (*server)->address().c_str());
  const std::vector<std::string> addresses = (*server)->addresses();
  for (size_t i = 1; i < addresses.size(); i++) std::printf("also on %s\n", addresses[i].c_str());
  if (options.tls.mode != nbd::TlsMode::kOff) {
    std::printf("tls %s\n", nbd::TlsModeName(options.tls.mode));
  }
  if (observers.control) std::printf("control socket %s\n", observers.control->address().c_str());
  if (observers.metrics) {
    std::printf("metrics http://%s/metrics\n", observers.metrics->address().c_str());
  }
  std::fflush(stdout);

  int sig = 0;
  while (sigwait(&sigs, &sig) == 0 && sig == SIGHUP) ReloadAccess(**server);
  std::fprintf(stderr, "arcstore serve: %s, shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  (*server)->Shutdown();
  observers.control.reset();
  observers.metrics.reset();
  if (a.print_stats) {
    std::fprintf(stderr, "%s", stats::ToKstatText((*pool)->stats().TakeSnapshot()).c_str());
  }
  stalls->reset();
  server->reset();
  exports.clear();
  Status closed = (*pool)->Close();
  if (!closed.ok()) throw CommandFailed("closing pool " + a.pool_path + ": " + closed.ToString());
}

}  // namespace

void AddServeCommand(CLI::App& app) {
  auto* c = app.add_subcommand("serve", "Serve a pool's volumes over NBD");
  static ServeArgs a;
  c->add_option("POOL", a.pool_path, "pool file or block device")->required();
  c->add_option("--socket", a.server.socket_path,
                "unix socket path; who may connect is decided by the socket file's "
                "permissions (--socket-mode), TLS is optional on it");
  c->add_option("--listen", a.server.listen_addresses,
                "TCP HOST:PORT or [IPV6]:PORT, repeatable; beyond loopback needs --tls require "
                "(or --insecure)");
  c->add_option("--tls", a.tls_mode,
                "off | on (offered) | require (every TCP client must STARTTLS first)");
  c->add_option("--tls-certificates", a.server.tls.certificates_dir,
                "X.509 directory: ca-cert.pem, server-cert.pem, server-key.pem, [ca-crl.pem]");
  c->add_flag("--tls-verify-peer", a.server.tls.verify_peer,
              "require a client certificate signed by ca-cert.pem; its subject is the identity");
  c->add_option("--tls-psk", a.server.tls.psk_file,
                "pre-shared keys, psktool format (username:hexkey); the username is the identity");
  c->add_option("--access", a.server.access_file,
                "which identity may open which volume, ro or rw (docs/serving.md); SIGHUP "
                "reloads it");
  c->add_flag("--insecure", a.server.allow_insecure_network,
              "allow --listen beyond loopback without --tls require (warns at every start)");
  c->add_option("--export", a.exports, "volume to serve (repeatable; default: all)");
  c->add_flag("--read-only", a.read_only, "open the pool read-only and refuse writes");
  c->add_flag("--no-intent-log", a.no_intent_log,
              "FLUSH and FUA wait for a txg sync instead of an intent log commit");
  c->add_option("--arc-max", a.arc_max, "ARC size (e.g. 256M)");
  c->add_option("--arc-policy", a.arc_policy,
                 "cache replacement policy: arc, or duet (ARC and LIRS, led by whichever wins on "
                 "a sample of the keys; keeps a working set through scans larger than the cache)")
      ->check(CLI::IsMember({"arc", "duet"}));
  c->add_option("--arc-pretouch", a.arc_pretouch,
                "ARC memory written once ahead of need, in the background, so that writers of a "
                "growing ARC do not pay a page's first touch; the intent log's copy memory too "
                "(e.g. 2G; default none)");
  c->add_option("--arc-grow-ahead", a.arc_grow_ahead,
                "memory a background thread keeps ready ahead of a growing ARC (default 64M; 0: "
                "writers map new buffers themselves)");
  c->add_option("--io-backend", a.io_backend, "pool device backend: auto, io_uring or psync");
  c->add_option("--sync-nice", a.sync_nice,
                "nice value of the txg sync thread, 0..19 (default 19; 0: as the request threads)");
  c->add_option("--sync-kick", a.sync_kick,
                "the open txg's new dirty data, in percent of the dirty limit, that starts its "
                "sync, 1..100 (default 30)")
      ->check(CLI::Range(1, 100));
  c->add_option("--poll-us", a.poll_us,
                "longest a connection thread polls for the next request before it sleeps, "
                "adapted per client (default 50; 0: never poll)");
  c->add_option("--max-pollers", a.server.max_pollers,
                "connection threads polling at once (default 0: CPUs - 1)");
  c->add_option("--max-connections", a.server.max_connections, "connections served at once");
  c->add_option("--max-in-flight", a.server.max_in_flight_per_connection,
                "requests in flight per connection");
  c->add_option("--max-payload", a.max_payload, "largest READ/WRITE payload (default 32M)");
  c->add_option("--socket-mode", a.socket_mode, "unix socket permissions (octal, default 0600)");
  c->add_flag("--stats", a.print_stats, "print every stat on stderr at exit");
  c->add_option("--control", a.control_path,
                "control socket for stat/iostat/txgs/summary/doctor/trace (default POOL.ctl)");
  c->add_flag("--no-control", a.no_control, "no control socket");
  c->add_option("--metrics", a.metrics_address,
                "serve Prometheus metrics on http://127.0.0.1:PORT/metrics (loopback only)");
  c->callback([] { Serve(a); });
}

}  // namespace arcstore::cli
