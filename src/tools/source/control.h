// The control socket of `arcstore serve` (serve --control PATH, default
// POOL.ctl) and its metrics endpoint (serve --metrics 127.0.0.1:PORT).
//
// Control protocol: one request per connection, a line of text; the reply is
// a status line, then a body until the server closes the connection.
//
//   request                          reply body
//   stats                            the stats snapshot (stats/wire.h JSON)
//   txgs                             the txg history (JSON array of TxgRow)
//   info                             Pool::Info as JSON (PoolInfoToJson)
//   trace start RING_ENTRIES MODE PATH
//                                    nothing; MODE is new or replace, PATH
//                                    the rest of the line: absolute, its
//                                    directory resolved by the client, and
//                                    checked again by the server, which
//                                    writes it (format/output_file.h)
//   trace stop                       nothing
//   cache add PATH                   nothing; PATH (absolute) becomes a cache
//   cache remove PATH                device of the pool, or stops being one
//
//   status line: "ok" | "error <message>"
//
// Limits: a request line is at most kMaxControlRequestBytes; a reply at most
// stats::kMaxWireBytes; every read and write waits at most the server's or
// client's timeout. Unknown requests get an error naming them.
//
// Trust: the socket is created 0600, so only the server's user and root can
// connect. Reading stats is harmless; a request that makes the server write
// a file or device (trace start, cache add) is refused unless the peer
// (SO_PEERCRED) is root or the server's own user, who could write it anyway,
// and for a trace even then
// the file must be new, or a plain regular file with `replace`: never a
// device, a pool or a file held locked (docs/observability.md, "The control
// socket's trust model").
//
// Metrics: HTTP/1.0-style; GET /metrics (or /) answers the Prometheus text
// exposition of a fresh snapshot (stats/prometheus.h); anything else is 404
// or 405. One request per connection.
//
// Thread-safety: pure functions over a StatsSource; the source's contract
// applies.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"
#include "tools/source/stats_source.h"

namespace arcstore::tools {

inline constexpr size_t kMaxControlRequestBytes = 4096;
inline constexpr size_t kMaxHttpRequestBytes = 8192;
inline constexpr uint64_t kMaxTraceRingEntries = uint64_t{1} << 24;  // the pool allows 4 .. 16M

// Who sent a request: the peer credentials of its connection.
struct ControlPeer {
  uint32_t uid = 0;
  int32_t pid = 0;
};
// Whether `peer` may make the server write files (root or the server's
// effective user).
bool PeerMayWriteFiles(const ControlPeer& peer);

// "trace start RING MODE PATH" for a resolved `path`.
std::string TraceStartRequest(const std::string& path, uint64_t ring_entries,
                              bool replace_existing);

// The server side: a whole reply (status line and body) to one request line
// (without its newline) from `peer`.
std::string HandleControlRequest(StatsSource& source, std::string_view request,
                                 const ControlPeer& peer);
// Serves one control connection: reads the request, writes the reply.
void ServeControlConnection(StatsSource& source, int fd, uint32_t timeout_ms);

// The client side: sends `request` and returns the body of an "ok" reply, or
// the server's error.
Result<std::string> ControlCall(const std::string& socket_path, std::string_view request,
                                uint32_t timeout_ms);

// The whole HTTP response to one request (its head, as received).
std::string HandleMetricsRequest(StatsSource& source, std::string_view http_request);
void ServeMetricsConnection(StatsSource& source, int fd, uint32_t timeout_ms);

}  // namespace arcstore::tools
