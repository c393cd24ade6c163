// What an NBD server serves (exports) and how (ServerOptions).
//
// An Export names one arcstore::Volume; the server shares ownership of the
// volume for as long as it runs. ServerOptions are plain values with
// defaults; Validate() names the first bad option and why. Both are value
// types with no internal synchronisation.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arcstore/status.h"
#include "arcstore/volume.h"
#include "base/result.h"
#include "base/units.h"
#include "nbd/tls_options.h"

namespace arcstore::nbd {

struct Export {
  std::string name;                 // what clients ask for; at most 4096 bytes
  std::shared_ptr<Volume> volume;   // required
  bool read_only = false;
  std::string description;          // shown by NBD_OPT_LIST and NBD_INFO_DESCRIPTION

  Status Validate() const;
};

struct ServerOptions {
  // At least one of the two: a unix socket path, and/or TCP addresses
  // ("127.0.0.1:10809", "[::]:10809", "0.0.0.0:0": listen.h,
  // ParseTcpAddress; port 0 picks a free port, see Server::addresses()).
  // An address beyond loopback needs tls.mode kRequire, or
  // allow_insecure_network: plaintext NBD lets anyone who can reach the
  // port read and write the volumes.
  std::string socket_path;
  std::vector<std::string> listen_addresses;
  bool allow_insecure_network = false;
  // Permissions of the unix socket file: the only access control of unix
  // connections that do not negotiate TLS.
  uint32_t socket_mode = 0600;
  // NBD_OPT_STARTTLS and its credentials (tls_options.h).
  TlsOptions tls;
  // Who may see and open which export (access.h); empty: everyone, every
  // export. Read at Start; Server::ReloadAccess re-reads it.
  std::string access_file;
  // Connections in their handshake (options and TLS) at once; while that
  // many are, the server accepts no more (they wait in the listen
  // backlog). Each handshake ends by handshake_timeout_ns.
  uint32_t max_handshakes = 128;

  // Connections served at once; one more is answered with an error
  // (NBD_REP_ERR_POLICY to its options) and closed.
  uint32_t max_connections = 64;
  // Requests of one connection in the engine at once, and the payload bytes
  // they hold. Past either limit the server stops reading that connection
  // (TCP backpressure) until a request completes; nothing is refused.
  uint32_t max_in_flight_per_connection = 64;
  uint64_t max_in_flight_bytes_per_connection = 256 * kMiB;
  // The maximum payload (NBD_INFO_BLOCK_SIZE maximum): a READ or WRITE longer
  // than this gets NBD_EINVAL (a WRITE's payload is read and dropped when it
  // is at most 32 MiB, larger ones are a hard disconnect).
  uint32_t max_payload_bytes = 32 * kMiB;
  // One BLOCK_STATUS (and the hole map of one structured READ) describes at
  // most this many bytes; the protocol allows a shorter answer.
  uint64_t max_block_status_bytes = 1 * kGiB;
  // A client must finish its handshake (options and TLS) within this time
  // of being accepted; past it the server closes the connection.
  uint64_t handshake_timeout_ns = 30 * kNsPerSec;
  // Shutdown() waits this long for clients to take their replies before it
  // closes their sockets outright.
  uint64_t shutdown_grace_ns = 10 * kNsPerSec;
  // A request that arrives while its connection has nothing else in flight
  // and no further request buffered (a client at queue depth 1) runs on the
  // connection's thread (Volume::SubmitAndWait) instead of on an engine
  // thread, whatever it may wait for: a short READ, WRITE, TRIM or
  // WRITE_ZEROES (at most 64 KiB, FUA included) or a FLUSH. That saves two
  // thread handoffs per request; while it runs (a write throttled, a read
  // from disk, a flush) the connection reads nothing more.
  bool inline_idle_requests = true;
  // At any queue depth, a short READ, WRITE, TRIM or WRITE_ZEROES, or a READ
  // or WRITE of up to 1 MiB, without FUA runs on the connection's thread
  // when the volume's hint (Volume::MayWait) says it will not wait: a cache
  // hit, a write the throttle lets through. Misses and throttled writes
  // are submitted.
  bool inline_requests_that_do_not_wait = true;
  // Before a connection thread sleeps waiting for its client's next
  // request (or the rest of a payload) it polls the socket for up to this
  // long, adapting the window to the client (adaptive_poll.h): a client at
  // queue depth 1 gets its replies without the server's sleep and wakeup
  // per request, and a large WRITE is received without a sleep per piece,
  // at the cost of CPU spent polling. 0 turns polling off; at most 1 ms.
  uint64_t poll_window_ns = 0;
  // Connection threads polling at once, server-wide; 0 means one fewer
  // than the CPUs (at least one). At most 1024.
  uint32_t max_pollers = 0;
  // The export the empty name selects; empty means the first export.
  std::string default_export;
  // Called on a connection's thread for each client turned away for who it
  // is: a TLS handshake that failed (bad certificate, unknown PSK identity,
  // deadline, anything else) or a volume its identity may not open.
  // `peer` is the client's address ("127.0.0.1:40312", "[::1]:40312", or
  // "unix socket"), `why` a sentence. Must be thread-safe and must not
  // block for long; nullptr: not reported (the stats count them anyway).
  std::function<void(const std::string& peer, const std::string& why)> on_security_refusal;

  Status Validate() const;
};

// Checks the exports as a set: at least one, names unique and valid, the
// default export (if named) present, record sizes within the payload limit.
Status ValidateExports(const std::vector<Export>& exports, const ServerOptions& options);

}  // namespace arcstore::nbd
