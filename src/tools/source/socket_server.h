// SocketServer: a small request/response server on a unix socket or a
// loopback TCP port, for the control socket and the metrics endpoint of
// `arcstore serve`.
//
//   Start() binds and listens, then one thread runs:
//     poll(listen fd, wake fd) -> accept -> handler(conn fd) -> close
//   Shutdown() (or the destructor) wakes the thread through an eventfd,
//   joins it and removes the unix socket file it created.
//
// Connections are served one at a time, in order: these are low-rate
// observer requests (a snapshot per second), and one at a time bounds their
// memory and CPU. The handler is given deadlines through the helpers below,
// so a client that stalls cannot hold the server for longer than
// io_timeout_ms per read or write.
//
// Thread-safety: Start/Shutdown from one owning thread; the handler runs on
// the server's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "base/result.h"

namespace arcstore::tools {

struct SocketServerOptions {
  std::string unix_path;       // either this ...
  std::string listen_address;  // ... or 127.0.0.1:PORT (loopback only; port 0 = any)
  uint32_t socket_mode = 0600;
  uint32_t io_timeout_ms = 5000;

  Status Validate() const;
};

class SocketServer {
 public:
  using Handler = std::function<void(int fd)>;

  static Result<std::unique_ptr<SocketServer>> Start(const SocketServerOptions& options,
                                                     Handler handler);
  ~SocketServer();
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  void Shutdown();
  // The unix path, or 127.0.0.1:PORT with the port actually bound.
  std::string address() const;

 private:
  SocketServer(const SocketServerOptions& options, Handler handler);
  Status Listen();
  void Loop();

  const SocketServerOptions options_;
  const Handler handler_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  uint16_t port_ = 0;
  bool created_socket_file_ = false;
  std::thread thread_;
};

// Socket helpers with a deadline (milliseconds per wait).
// Reads until `stop` is found in what was read (the result includes it),
// end of stream, or `limit_bytes`; errors on timeout or overflow.
Result<std::string> ReadUntil(int fd, std::string_view stop, size_t limit_bytes, uint32_t timeout_ms);
// Reads to end of stream, at most `limit_bytes`.
Result<std::string> ReadToEnd(int fd, size_t limit_bytes, uint32_t timeout_ms);
Status WriteAll(int fd, std::string_view data, uint32_t timeout_ms);
// Connects to a unix socket; NotFound when nothing listens there.
Result<int> ConnectUnix(const std::string& path);
Result<int> ConnectTcp(const std::string& address);

}  // namespace arcstore::tools
