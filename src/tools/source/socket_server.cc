#include "tools/source/socket_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/thread_name.h"
#include "net/listen.h"

namespace arcstore::tools {

namespace {

Status Errno(const std::string& what) {
  return Status::IOError(what + ": " + std::strerror(errno));
}

// Waits until `fd` is ready for `events`; false on timeout.
Result<bool> WaitFor(int fd, short events, uint32_t timeout_ms) {
  pollfd p{fd, events, 0};
  while (true) {
    int n = ::poll(&p, 1, static_cast<int>(timeout_ms));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return Errno("poll");
  }
}

}  // namespace

Status SocketServerOptions::Validate() const {
  if (unix_path.empty() == listen_address.empty()) {
    return Status::InvalidArgument("socket server: give exactly one of a unix path and a listen address");
  }
  if (!unix_path.empty()) ARC_RETURN_IF_ERROR(net::UnixSocketAddress(unix_path).status());
  if (!listen_address.empty()) ARC_RETURN_IF_ERROR(net::ParseListenAddress(listen_address).status());
  if (io_timeout_ms == 0 || io_timeout_ms > 600000) {
    return Status::InvalidArgument("socket server: io_timeout_ms must be in 1..600000");
  }
  return Status::Ok();
}

Result<int> ConnectUnix(const std::string& path) {
  ARC_ASSIGN_OR_RETURN(sockaddr_un a, net::UnixSocketAddress(path));
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    int e = errno;
    ::close(fd);
    if (e == ENOENT || e == ECONNREFUSED) return Status::NotFound("nothing listens on " + path);
    errno = e;
    return Errno("connect " + path);
  }
  return fd;
}

Result<int> ConnectTcp(const std::string& address) {
  ARC_ASSIGN_OR_RETURN(net::ListenAddress la, net::ParseListenAddress(address));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(la.port);
  a.sin_addr.s_addr = htonl(la.ipv4_host_order);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    Status s = Errno("connect " + address);
    ::close(fd);
    return s;
  }
  return fd;
}

Result<std::string> ReadUntil(int fd, std::string_view stop, size_t limit_bytes, uint32_t timeout_ms) {
  std::string out;
  char buf[4096];
  while (stop.empty() || out.find(stop) == std::string::npos) {
    ARC_ASSIGN_OR_RETURN(bool ready, WaitFor(fd, POLLIN, timeout_ms));
    if (!ready) return Status::Aborted("no data within " + std::to_string(timeout_ms) + " ms");
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("read");
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > limit_bytes) {
      return Status::ResourceExhausted("more than " + std::to_string(limit_bytes) + " bytes");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::string> ReadToEnd(int fd, size_t limit_bytes, uint32_t timeout_ms) {
  return ReadUntil(fd, "", limit_bytes, timeout_ms);
}

Status WriteAll(int fd, std::string_view data, uint32_t timeout_ms) {
  while (!data.empty()) {
    ARC_ASSIGN_OR_RETURN(bool ready, WaitFor(fd, POLLOUT, timeout_ms));
    if (!ready) return Status::Aborted("peer did not read within " + std::to_string(timeout_ms) + " ms");
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("write");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

SocketServer::SocketServer(const SocketServerOptions& options, Handler handler)
    : options_(options), handler_(std::move(handler)) {}

Result<std::unique_ptr<SocketServer>> SocketServer::Start(const SocketServerOptions& options,
                                                          Handler handler) {
  ARC_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<SocketServer> s(new SocketServer(options, std::move(handler)));
  ARC_RETURN_IF_ERROR(s->Listen());
  s->thread_ = std::thread([p = s.get()] {
    NameThisThread("stats_server");
    p->Loop();
  });
  return s;
}

Status SocketServer::Listen() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Errno("eventfd");
  if (!options_.unix_path.empty()) {
    ARC_ASSIGN_OR_RETURN(listen_fd_, net::ListenUnix(options_.unix_path, options_.socket_mode, 16));
    created_socket_file_ = true;
  } else {
    ARC_ASSIGN_OR_RETURN(listen_fd_, net::ListenLoopbackTcp(options_.listen_address, 16, &port_));
  }
  return Status::Ok();
}

void SocketServer::Loop() {
  while (true) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int n = ::poll(p, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (p[1].revents & POLLIN) != 0) return;
    if ((p[0].revents & POLLIN) == 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    handler_(fd);
    ::close(fd);
  }
}

void SocketServer::Shutdown() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    ssize_t w = ::write(wake_fd_, &one, sizeof(one));
    (void)w;
    thread_.join();
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
  if (created_socket_file_) ::unlink(options_.unix_path.c_str());
  created_socket_file_ = false;
}

SocketServer::~SocketServer() { Shutdown(); }

std::string SocketServer::address() const {
  if (!options_.unix_path.empty()) return options_.unix_path;
  return options_.listen_address.substr(0, options_.listen_address.rfind(':')) + ":" +
         std::to_string(port_);
}

}  // namespace arcstore::tools
