// The NBD server: theory of operation.
//
// Purpose. Serve arcstore Volumes to unmodified NBD clients (the Linux nbd
// driver, libnbd's nbdinfo/nbdcopy/nbdsh, qemu, fio's nbd engine), speaking
// the protocol of doc/proto.md (NetworkBlockDevice/nbd): fixed newstyle
// handshake, simple and structured replies, base:allocation block status.
// The server uses only the public Volume interface (include/arcstore/).
//
// Where it listens, and who gets in. A unix socket (its file's permissions
// decide who connects) and/or TCP addresses, IPv4 or IPv6, one listening
// socket each, all served by the one accept thread. An address beyond
// loopback is refused at Validate unless TLS is required (or the caller
// accepts plaintext explicitly, allow_insecure_network). TLS is
// negotiated with NBD_OPT_STARTTLS (tls.cc has its theory); under
// --tls require every option before it except ABORT is answered
// NBD_REP_ERR_TLS_REQD (EXPORT_NAME: disconnect); unix clients are exempt.
// Each connection has an identity (PSK username, verified certificate
// subject, @anonymous, @unix) and the access policy (access.h) decides
// which exports LIST/INFO/GO show it and whether read-only; a denied
// export is answered as unknown. The policy is a shared_ptr swapped whole
// by ReloadAccess (SIGHUP in the CLI): a handshake takes the policy of the
// moment it was accepted and keeps it; open connections are never dropped.
//
// Handshake limits. Every accepted connection has a deadline
// (handshake_timeout_ns from accept, covering options and TLS alike); the
// accept thread wakes for the nearest one and closes connections still in
// their handshake past it. The connection's own thread counts the end once
// (err_handshake_timeout, and tls_fail_timeout inside a TLS handshake),
// whether its read timed out first or the close reached it. At most
// max_handshakes connections are in their handshake at once; while that
// many are, the accept thread stops accepting and new clients wait in the
// kernel's listen backlog (1024), so a flood of slow or stalled handshakes
// costs a bounded number of threads and never touches a volume.
//
// Model.
//
//   accept thread                connection thread (one per client)
//   -------------                ----------------------------------
//   poll(listen fd, wake fd)     Handshake: greeting, options... GO
//   accept -> Session --------->  Transmit: read header [+ payload]
//   reap finished sessions          Check (flags, range, ro, limits)
//                                   |  error: reply now (drain payload)
//                                   v
//                                 AcquireSlot (in-flight count and bytes;
//                                   blocks = TCP backpressure)
//                                   |
//                                   v
//                                 alone? ------------ yes --+
//                                   | no                    |
//                                   v                       v
//                                 short or READ <= 1 MiB, Volume::SubmitAndWait
//                                 no FUA, and             (caller_waits: the
//                                 !Volume::MayWait? -yes-> engine runs it on
//                                   | no                   this thread)
//                                   v
//                                 Volume::Submit(req, done)
//                                                         |
//   engine thread or inline  <----------------------------+
//   done: build reply -> send_mu_ -> writev -> stats -> ReleaseSlot
//
// Requests run inline. A request runs on the connection thread, through
// Volume::SubmitAndWait (the request marked caller_waits, which the engine
// runs on the calling thread), in two cases:
//  - Alone: nothing else of its connection in flight and nothing buffered
//    behind it (a client at queue depth 1, or a FLUSH after the writes it
//    covers). A short READ, WRITE, TRIM or WRITE_ZEROES (at most 64 KiB,
//    FUA included) or a FLUSH runs inline whatever it waits for: the
//    client sends nothing until it has the reply, so nothing else could
//    run meanwhile, and the handoff to an engine thread and back would
//    cost more than a 4 KiB operation. A flush commits the intent log on
//    the calling thread either way. But a FLUSH or a FUA request whose commit
//    would wait for a txg sync (Volume::MayWait of a flush: the log
//    dropped copies past its cap, the usual state after seconds of
//    writes without a flush) is submitted: a client that sends
//    independent requests on one connection (the kernel, nbdfuse, qemu)
//    may send more while it waits, and they are read and run meanwhile.
//  - Will not wait: otherwise (other requests in flight or buffered), a
//    short READ, WRITE, TRIM or WRITE_ZEROES, or a READ or WRITE of up to
//    1 MiB, without FUA runs inline when the volume's hint,
//    Volume::MayWait, says it will finish in memory (an ARC or dirty-copy
//    hit, a write the throttle lets through: see volume/volume_hint.cc).
//    Everything else (misses, throttled writes, FLUSH, FUA, CACHE,
//    BLOCK_STATUS, longer requests) is submitted, so a cold random-read
//    workload keeps its disk reads in parallel. A long READ from memory is
//    a copy and a send on either thread, and a long WRITE's payload is
//    received on the connection's thread either way, into buffers its
//    records then adopt, leaving the volume little more than bookkeeping;
//    submitted, each adds an engine thread's wake-up, and the reply waits
//    for the socket on that thread (bench/nbd/results.md, runs R and S,
//    measure both ways).
// The hint may be wrong: a "will not wait" that waits holds the reader
// (and so the client's other requests) for that long; a wrong "may wait"
// costs a handoff. Correctness never depends on it: the operation is the
// same on either thread, and the protocol lets replies of requests in
// flight together leave in any order. An inline WRITE whose payload lies
// whole in the reader's buffer is used there without a copy: it completes
// before the reader reads again. Any other WRITE of at least a record is
// received straight into buffers the volume lends (Volume::PrepareWrite:
// the engine's own record buffers, which its records then adopt), so a
// large write's bytes are copied once, by the kernel, on their way in.
// Inline replies are held back (below); after 16 inline requests in a row
// they are sent even though more requests are buffered, so a client whose
// queue stays full of hits gets its replies in bounded batches, and after
// an inline request longer than 64 KiB at once: its client waits for that
// reply to send its next long request, and over TCP the reader, with the
// window full of those payloads, would rarely find nothing buffered.
// Counted in nbd.requests_inline (run inline) and nbd.requests_may_wait
// (submitted because the hint said so); ServerOptions::inline_idle_requests and
// inline_requests_that_do_not_wait turn the two cases off. The rules of
// this paragraph are one class, RequestPolicy (request_policy.h), tested
// on its own.
//
// A client that flushes after each write (a database's commits, fio's
// fsync=1): the intent log writes a change that comes soon after a commit
// early (intent_log.cc, "Early writes"), so the client's FLUSH mostly
// finds its write durable or already at the device. The reader registers
// its thread for that (Volume::SetCallerThread) and writes the early batch
// its inline requests left itself, after it has sent their replies and
// before it waits for the next request (Volume::BeforeCallerWaits): the
// batch overlaps the client's round trip without waking the log's writer
// thread. Requests submitted to the engine leave theirs to that thread.
//
// Polling. When the reader finds nothing buffered (waiting for a request,
// or for more of a WRITE's payload) it first sends what it held back,
// then, with ServerOptions::poll_window_ns set (arcstore serve: 50 us),
// polls the socket without waiting before it sleeps in recv(). The window
// adapts per connection and at most max_pollers threads poll at once
// (adaptive_poll.h), so a client at queue depth 1 gets the next request
// picked up without a sleep and a cross-CPU wakeup per request, and an
// idle one costs nothing after a few waits. nbd.poll_caught / poll_slept /
// poll_no_budget / poll_ns.
//
// Replies leave in completion order, not request order (the protocol allows
// it); all chunks of one reply go out in one locked write, so chunks of
// different replies never interleave. Small replies made on the reader
// thread (inline completions, error replies) while more requests are
// already buffered are held back and written together just before the
// reader would wait (for input or for a slot), after 16 inline requests, or
// after a long one: a client with 32 requests in flight is woken once per
// batch, not once per reply. Completions on other
// threads write at once (after whatever is held back). A READ with structured replies first
// asks the volume for block status and sends unwritten or trimmed ranges as
// OFFSET_HOLE chunks (a read made only of holes never touches the data).
//
// Invariants.
//  - A reply to WRITE, TRIM, WRITE_ZEROES or FLUSH is sent only after the
//    Volume completed the operation; FUA writes pass kFua, FUA on TRIM and
//    WRITE_ZEROES flushes after the operation. Since a client issues FLUSH
//    after the replies it wants covered, and the Volume's flush covers every
//    write completed before it on any connection, FLUSH and FUA hold across
//    connections: the server advertises CAN_MULTI_CONN.
//  - A session's thread returns only when no request of it is in flight, so
//    completions never outlive their connection.
//  - Every request is answered exactly once, except DISC and requests cut
//    short by a disconnect.
//
// Bad clients (each counted in "nbd" err_<kind>; other connections never
// notice, since each session has its own thread, buffers and limits):
//   bad option or request magic, unknown client flags,
//   option data > 64 KiB, > 1024 options,
//   NBD_OPT_EXPORT_NAME of an unknown export    hard disconnect
//   unknown option (STARTTLS with TLS off)       NBD_REP_ERR_UNSUP
//   an option before STARTTLS under require      NBD_REP_ERR_TLS_REQD
//   STARTTLS twice or with data                  NBD_REP_ERR_INVALID
//   TLS handshake fails (certificate, PSK user,
//     key, garbage, deadline)                    disconnect, tls_fail_<why>
//   an export the identity may not open          NBD_REP_ERR_UNKNOWN, absent
//                                                from LIST (err_denied_volume)
//   malformed option, string > 4096 bytes,
//   meta context before structured replies,
//   structured replies twice, data on LIST      NBD_REP_ERR_INVALID
//   unknown export in INFO/GO/meta context      NBD_REP_ERR_UNKNOWN
//   unknown command, flag not valid for it       NBD_EINVAL
//   write-type command on a read-only export
//     or a read-only grant                       NBD_EPERM
//   offset + length past the end or overflowing  NBD_ENOSPC (write, zeroes),
//                                                NBD_EINVAL (others)
//   READ/WRITE longer than max_payload_bytes     NBD_EINVAL (structured READ:
//                                                NBD_EOVERFLOW); a WRITE's
//                                                payload is drained up to
//                                                32 MiB, beyond: disconnect
//   BLOCK_STATUS without base:allocation         NBD_EINVAL
//   a disconnect anywhere                        in-flight requests finish,
//                                                the session is freed
//
// Locking. Server::mu_ guards the session list and the stopping flag;
// Connection::mu_ guards its in-flight counters; Connection::send_mu_
// serializes writes to its socket. No two of them are ever held together.
// Volume completions take only the connection's locks.
//
// Limits (ServerOptions): max_connections (one more is answered
// NBD_REP_ERR_POLICY during its handshake; at most kMaxRefusing such
// sessions at once, beyond that the socket is closed at once),
// max_in_flight_per_connection and max_in_flight_bytes_per_connection
// (backpressure, not errors), max_payload_bytes (the advertised maximum),
// max_block_status_bytes, handshake_timeout_ns, max_handshakes, shutdown_grace_ns.
//
// Shutdown. Stop the accept thread, close the listening socket (and remove
// the unix socket file), shut down the read side of every connection, wait
// up to shutdown_grace_ns for sessions to answer what they have in flight,
// then close what is left outright and join every thread.
//
// Stats: see nbd_stats.h (module "nbd" and "nbd_export.<name>").
#include "nbd/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/clock.h"
#include "base/thread_name.h"
#include "nbd/connection.h"
#include "nbd/nbd_stats.h"
#include "net/listen.h"

namespace arcstore::nbd {
namespace {

// Sessions answering NBD_REP_ERR_POLICY at once (connections past the limit).
constexpr size_t kMaxRefusing = 8;

}  // namespace

struct Server::Session {
  std::unique_ptr<Connection> connection;
  std::thread thread;
  bool refused = false;
  uint64_t handshake_deadline_ns = 0;
  bool expired = false;  // closed at its handshake deadline (guarded by Server::mu_)
  bool done = false;     // guarded by Server::mu_
};

Server::Server(ServerOptions options, std::vector<Export> exports, stats::Registry* registry)
    : options_(std::move(options)),
      exports_(std::move(exports)),
      own_registry_(registry == nullptr ? std::make_unique<stats::Registry>() : nullptr),
      registry_(registry == nullptr ? own_registry_.get() : registry),
      poll_budget_(options_.max_pollers) {}

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options, std::vector<Export> exports,
                                              stats::Registry* registry) {
  ARC_RETURN_IF_ERROR(options.Validate());
  ARC_RETURN_IF_ERROR(ValidateExports(exports, options));
  std::unique_ptr<Server> s(new Server(std::move(options), std::move(exports), registry));
  if (s->options_.tls.mode != TlsMode::kOff) {
    ARC_ASSIGN_OR_RETURN(s->tls_, TlsCredentials::Load(s->options_.tls));
  }
  if (s->options_.access_file.empty()) {
    MutexLock l(&s->access_mu_);
    s->access_ = AccessPolicy::AllowAll();
  } else {
    ARC_RETURN_IF_ERROR(s->ReloadAccess());
  }
  std::vector<std::string> names;
  for (const Export& e : s->exports_) names.push_back(e.name);
  s->stats_ = std::make_unique<NbdStats>(s->registry_, names);
  ARC_RETURN_IF_ERROR(s->Listen());
  s->accept_thread_ = std::thread([p = s.get()] {
    NameThisThread("nbd_accept");
    p->AcceptLoop();
  });
  return s;
}

size_t Server::active_connections() {
  MutexLock l(&mu_);
  size_t n = 0;
  for (const auto& s : sessions_) n += (!s->refused && !s->done) ? 1 : 0;
  return n;
}

void Server::Wake() {
  uint64_t one = 1;
  ssize_t w = ::write(wake_fd_, &one, sizeof(one));
  (void)w;  // a full counter already means "wake up"
}

size_t Server::ExpireHandshakes(int* timeout_ms) {
  const uint64_t now = DefaultClock()->NowNs();
  uint64_t next = UINT64_MAX;
  size_t handshaking = 0;
  MutexLock l(&mu_);
  for (auto& s : sessions_) {
    if (s->done || s->expired || !s->connection->in_handshake()) continue;
    if (now >= s->handshake_deadline_ns) {
      s->expired = true;
      s->connection->ForceClose();  // its thread sees the stream end and counts it
      continue;
    }
    handshaking++;
    next = std::min(next, s->handshake_deadline_ns);
  }
  *timeout_ms = next == UINT64_MAX ? -1 : static_cast<int>((next - now) / 1000000 + 1);
  return handshaking;
}

void Server::AcceptLoop() {
  std::vector<pollfd> p(listeners_.size() + 1);
  while (true) {
    int timeout_ms = -1;
    const size_t handshaking = ExpireHandshakes(&timeout_ms);
    // At the bound on handshakes, new clients wait in the listen backlog.
    const short listen_events = handshaking < options_.max_handshakes ? POLLIN : 0;
    // A handshake that ends does not wake this loop: look again soon.
    if (listen_events == 0 && (timeout_ms < 0 || timeout_ms > 10)) timeout_ms = 10;
    for (size_t i = 0; i < listeners_.size(); i++) p[i] = {listeners_[i].fd, listen_events, 0};
    p.back() = {wake_fd_, POLLIN, 0};
    int r = ::poll(p.data(), p.size(), timeout_ms);
    if (r < 0 && errno != EINTR) break;
    if (p.back().revents & POLLIN) {
      uint64_t v;
      ssize_t got = ::read(wake_fd_, &v, sizeof(v));
      (void)got;
    }
    {
      MutexLock l(&mu_);
      if (stopping_) break;
    }
    Reap();
    for (size_t i = 0; r > 0 && i < listeners_.size(); i++) {
      if ((p[i].revents & POLLIN) == 0) continue;
      sockaddr_storage peer{};
      socklen_t peer_length = sizeof(peer);
      int fd = ::accept4(listeners_[i].fd, reinterpret_cast<sockaddr*>(&peer), &peer_length,
                         SOCK_CLOEXEC);
      if (fd >= 0) Admit(fd, listeners_[i].unix_socket, net::FormatPeerAddress(peer, peer_length));
    }
  }
}

void Server::Admit(int fd, bool unix_socket, std::string peer) {
  if (!unix_socket) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  HandshakeSecurity security;
  security.mode = options_.tls.mode;
  security.credentials = tls_.get();
  security.unix_socket = unix_socket;
  security.access = access();
  const uint64_t deadline_ns = DefaultClock()->NowNs() + options_.handshake_timeout_ns;
  security.deadline_ns = deadline_ns;
  security.peer = std::move(peer);
  MutexLock l(&mu_);
  size_t serving = 0, refusing = 0;
  for (const auto& s : sessions_) {
    if (s->done) continue;
    (s->refused ? refusing : serving)++;
  }
  bool refuse = serving >= options_.max_connections;
  if (refuse) {
    stats_->connections_refused->Add();
    if (refusing >= kMaxRefusing) {
      ::close(fd);
      return;
    }
  } else {
    stats_->connections_accepted->Add();
    stats_->connections_active->Add(1);
  }
  auto s = std::make_unique<Session>();
  s->refused = refuse;
  s->handshake_deadline_ns = deadline_ns;
  s->connection =
      std::make_unique<Connection>(std::make_unique<SocketTransport>(fd), &exports_, &options_,
                                   stats_.get(), &poll_budget_, refuse, std::move(security));
  Session* raw = s.get();
  sessions_.push_back(std::move(s));
  raw->thread = std::thread([this, raw] {
    NameThisThread("nbd_conn");
    RunSession(raw);
  });
}

void Server::RunSession(Session* s) {
  s->connection->Serve();
  if (!s->refused) stats_->connections_active->Add(-1);
  {
    MutexLock l(&mu_);
    s->done = true;
    cv_.SignalAll();
  }
  Wake();
}

void Server::Reap() {
  std::vector<std::unique_ptr<Session>> finished;
  {
    MutexLock l(&mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if ((*it)->done) {
        finished.push_back(std::move(*it));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& s : finished) s->thread.join();
}

void Server::Shutdown() {
  MutexLock once(&shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  {
    MutexLock l(&mu_);
    stopping_ = true;
  }
  Wake();
  if (accept_thread_.joinable()) accept_thread_.join();
  for (Listener& listener : listeners_) {
    if (listener.fd >= 0) ::close(listener.fd);
    listener.fd = -1;
  }
  if (bound_socket_file_) ::unlink(options_.socket_path.c_str());
  {
    MutexLock l(&mu_);
    for (auto& s : sessions_) s->connection->StopReading();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(
                                                           options_.shutdown_grace_ns);
    while (true) {
      bool all_done = true;
      for (auto& s : sessions_) all_done = all_done && s->done;
      if (all_done || std::chrono::steady_clock::now() >= deadline) break;
      cv_.WaitFor(&mu_, std::chrono::milliseconds(50));
    }
    for (auto& s : sessions_) {
      if (!s->done) s->connection->ForceClose();
    }
  }
  std::vector<std::unique_ptr<Session>> all;
  {
    MutexLock l(&mu_);
    all.swap(sessions_);
  }
  for (auto& s : all) s->thread.join();
}

Server::~Server() {
  Shutdown();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

}  // namespace arcstore::nbd
