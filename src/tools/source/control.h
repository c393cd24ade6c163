// The control socket of `arcstore serve` (serve --control PATH, default
// POOL.ctl) and its metrics endpoint (serve --metrics 127.0.0.1:PORT).
//
// Control protocol: one request per connection, a line of text; the reply is
// a status line, then a body until the server closes the connection.
//
//   request                          reply body
//   stats                            the stats snapshot (stats/wire.h JSON)
//   txgs                             the txg history (JSON array of TxgRow)
//   trace start RING_ENTRIES PATH    nothing (PATH is the rest of the line,
//                                    written by the server's process)
//   trace stop                       nothing
//
//   status line: "ok" | "error <message>"
//
// Limits: a request line is at most kMaxControlRequestBytes; a reply at most
// stats::kMaxWireBytes; every read and write waits at most the server's or
// client's timeout. Unknown requests get an error naming them.
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

// The server side: a whole reply (status line and body) to one request line
// (without its newline).
std::string HandleControlRequest(StatsSource& source, std::string_view request);
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
