// Listening sockets for the servers of `arcstore serve`: the NBD server
// (src/nbd) and the control socket and metrics endpoint (src/tools/source).
// Below both, so that neither imports the other.
//
//   ListenUnix:        a unix socket at `path` with permissions `mode`; a
//                      socket file left by a server that died is replaced,
//                      a live one (something accepts on it) or a file that
//                      is not a socket is refused (AlreadyExists).
//   ListenLoopbackTcp: "127.x.x.x:PORT" (ParseListenAddress; loopback
//                      only), port 0 for any free port; `bound_port` gets
//                      the port bound.
//   ListenTcp:         any numeric IPv4 or IPv6 address (ParseTcpAddress:
//                      "0.0.0.0:10809", "[::]:10809", "[fe80::1%veth0]:0",
//                      "localhost:PORT"); IPv6 sockets are IPv6-only so
//                      that "[::]" and "0.0.0.0" can both be listened on.
//
// Both return a listening, close-on-exec descriptor the caller owns. On
// error nothing is left behind (no descriptor, no socket file).
//
// Thread-safety: reentrant.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstdint>
#include <string>

#include "base/result.h"

namespace arcstore::net {

// The address of a unix socket; InvalidArgument when `path` is empty or does
// not fit.
Result<sockaddr_un> UnixSocketAddress(const std::string& path);

// A TCP address to listen on, parsed from "HOST:PORT" or "[IPV6]:PORT".
struct TcpAddress {
  sockaddr_storage address{};
  socklen_t length = 0;
  bool loopback = false;  // 127.0.0.0/8, ::1 or ::ffff:127.x.x.x
  std::string host;       // as given, without brackets
};
Result<TcpAddress> ParseTcpAddress(const std::string& text);

// Parses "127.0.0.1:10809" (or "localhost:PORT") into host and port; only
// loopback addresses are accepted.
struct ListenAddress {
  uint32_t ipv4_host_order = 0;
  uint16_t port = 0;
};
Result<ListenAddress> ParseListenAddress(const std::string& text);

// An accepted client's address for logs: "127.0.0.1:40312", "[::1]:40312",
// or "unix socket" (a unix socket's peers have no useful address).
std::string FormatPeerAddress(const sockaddr_storage& address, socklen_t length);

Result<int> ListenUnix(const std::string& path, uint32_t mode, int backlog);
Result<int> ListenTcp(const TcpAddress& address, int backlog, uint16_t* bound_port);
Result<int> ListenLoopbackTcp(const std::string& address, int backlog, uint16_t* bound_port);

}  // namespace arcstore::net
