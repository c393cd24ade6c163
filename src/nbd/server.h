// Server: serves arcstore Volumes to NBD clients over a unix socket and/or
// TCP addresses, in plaintext or TLS (tls.h), each client seeing only the
// exports its identity may open (access.h).
//
//   auto server = Server::Start(options, {{"vol0", volume}}, &registry);
//   ... clients connect (nbdinfo, nbdcopy, qemu-img, fio's nbd engine) ...
//   server->Shutdown();   // stop accepting, finish in-flight requests
//
// Start() validates the options and the exports, binds and listens, and
// starts the accept thread; it returns once clients can connect. Shutdown()
// stops accepting, lets every connection finish the requests it has in
// flight (their replies are sent), closes every connection and returns; it
// is idempotent and the destructor calls it. Signal handling belongs to the
// caller (the CLI).
//
// Thread-safety: all methods may be called from any thread. The server
// shares ownership of the volumes; `registry` (if given) must outlive the
// server, which declares its stats there on Start() and removes them when
// destroyed. With no registry the server keeps a private one.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/thread_annotations.h"
#include "nbd/access.h"
#include "nbd/adaptive_poll.h"
#include "nbd/options.h"
#include "nbd/tls.h"
#include "stats/registry.h"

namespace arcstore::nbd {

class Connection;
class NbdStats;

class Server {
 public:
  static Result<std::unique_ptr<Server>> Start(ServerOptions options, std::vector<Export> exports,
                                               stats::Registry* registry = nullptr);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void Shutdown();

  // The first listening address: the unix socket path, or "HOST:PORT"
  // with the bound port ("[::1]:PORT" for IPv6).
  std::string address() const;
  // Every listening address, in the order of the options (socket first).
  std::vector<std::string> addresses() const;
  // The first bound TCP port (0 with only a unix socket).
  uint16_t port() const { return port_; }
  // Re-reads ServerOptions::access_file. On success new handshakes use it;
  // connections already open keep what they negotiated. On error the
  // policy in force stays and the error says why (file:line).
  Status ReloadAccess();
  // The registry holding the server's stats.
  stats::Registry* registry() const { return registry_; }
  // Connections being served now (refused ones excluded).
  size_t active_connections();

 private:
  struct Session;
  struct Listener {
    int fd = -1;
    bool unix_socket = false;
    std::string address;  // as address() reports it
  };

  Server(ServerOptions options, std::vector<Export> exports, stats::Registry* registry);
  Status Listen();
  void AcceptLoop();
  // `peer`: the client's address, as net::FormatPeerAddress writes it.
  void Admit(int fd, bool unix_socket, std::string peer);
  // Closes connections past their handshake deadline; returns how many
  // are in their handshake, and the poll timeout to the next deadline.
  size_t ExpireHandshakes(int* timeout_ms) ARC_EXCLUDES(mu_);
  std::shared_ptr<const AccessPolicy> access() ARC_EXCLUDES(access_mu_);
  void RunSession(Session* s);
  // Joins and frees sessions whose thread has finished.
  void Reap() ARC_EXCLUDES(mu_);
  void Wake();

  const ServerOptions options_;
  const std::vector<Export> exports_;
  std::unique_ptr<stats::Registry> own_registry_;
  stats::Registry* const registry_;
  std::unique_ptr<NbdStats> stats_;
  PollBudget poll_budget_;

  std::shared_ptr<const TlsCredentials> tls_;  // null: TLS off
  Mutex access_mu_;
  std::shared_ptr<const AccessPolicy> access_ ARC_GUARDED_BY(access_mu_);

  std::vector<Listener> listeners_;
  int wake_fd_ = -1;  // eventfd: wakes the accept loop
  uint16_t port_ = 0;
  bool bound_socket_file_ = false;  // ours to remove
  std::thread accept_thread_;

  Mutex shutdown_mu_;  // serializes Shutdown() callers
  bool shut_down_ ARC_GUARDED_BY(shutdown_mu_) = false;

  Mutex mu_;
  CondVar cv_;  // a session finished
  bool stopping_ ARC_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<Session>> sessions_ ARC_GUARDED_BY(mu_);
};

}  // namespace arcstore::nbd
