#include "net/listen.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace arcstore::net {

namespace {

Result<uint32_t> ParseIpv4(const std::string& host) {
  if (host == "localhost") return uint32_t{0x7f000001};
  uint32_t value = 0;
  size_t pos = 0;
  for (int part = 0; part < 4; part++) {
    size_t end = pos;
    while (end < host.size() && host[end] >= '0' && host[end] <= '9') end++;
    if (end == pos || end - pos > 3) return Status::InvalidArgument("bad IPv4 address " + host);
    unsigned long octet = std::strtoul(host.substr(pos, end - pos).c_str(), nullptr, 10);
    if (octet > 255) return Status::InvalidArgument("bad IPv4 address " + host);
    value = value << 8 | static_cast<uint32_t>(octet);
    pos = end;
    if (part < 3) {
      if (pos >= host.size() || host[pos] != '.') {
        return Status::InvalidArgument("bad IPv4 address " + host);
      }
      pos++;
    }
  }
  if (pos != host.size()) return Status::InvalidArgument("bad IPv4 address " + host);
  return value;
}

Status Errno(const std::string& what) {
  return Status::IOError(what + ": " + std::strerror(errno));
}

// Removes a stale unix socket left by a dead server; refuses to touch a live
// one or anything that is not a socket.
Status ClearStaleSocket(const std::string& path, const sockaddr_un& a) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return Status::Ok();
  if (!S_ISSOCK(st.st_mode)) {
    return Status::AlreadyExists(path + " exists and is not a socket");
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  bool live = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0;
  ::close(fd);
  if (live) return Status::AlreadyExists(path + " is in use by a running server");
  ::unlink(path.c_str());
  return Status::Ok();
}

// Closes `fd` (and removes `path` when given) unless released.
class ListenGuard {
 public:
  explicit ListenGuard(int fd) : fd_(fd) {}
  ~ListenGuard() {
    if (fd_ < 0) return;
    ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  void set_path(const std::string& path) { path_ = path; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace

Result<ListenAddress> ParseListenAddress(const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    return Status::InvalidArgument("listen address '" + text + "' is not HOST:PORT");
  }
  ARC_ASSIGN_OR_RETURN(uint32_t host, ParseIpv4(text.substr(0, colon)));
  if ((host >> 24) != 127) {
    return Status::InvalidArgument("listen address '" + text +
                                   "' is not a loopback address (127.x.x.x)");
  }
  std::string port_text = text.substr(colon + 1);
  char* end = nullptr;
  errno = 0;
  unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || errno != 0 || port > 65535) {
    return Status::InvalidArgument("listen address '" + text + "' has a bad port");
  }
  return ListenAddress{host, static_cast<uint16_t>(port)};
}

std::string FormatPeerAddress(const sockaddr_storage& address, socklen_t length) {
  char host[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET && length >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    return std::string(host) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (address.ss_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  if (address.ss_family == AF_UNIX) return "unix socket";
  return "unknown address";
}

Result<sockaddr_un> UnixSocketAddress(const std::string& path) {
  sockaddr_un a{};
  if (path.empty() || path.size() >= sizeof(a.sun_path)) {
    return Status::InvalidArgument("unix socket path '" + path + "' is empty or longer than " +
                                   std::to_string(sizeof(a.sun_path) - 1) + " bytes");
  }
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.data(), path.size());
  return a;
}

Result<int> ListenUnix(const std::string& path, uint32_t mode, int backlog) {
  ARC_ASSIGN_OR_RETURN(sockaddr_un a, UnixSocketAddress(path));
  ARC_RETURN_IF_ERROR(ClearStaleSocket(path, a));
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  ListenGuard guard(fd);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return Errno("bind " + path);
  guard.set_path(path);
  // Nobody can connect before listen(), so the mode is set in time.
  if (::chmod(path.c_str(), mode) != 0) return Errno("chmod " + path);
  if (::listen(fd, backlog) != 0) return Errno("listen " + path);
  return guard.Release();
}

Result<TcpAddress> ParseTcpAddress(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) {
    return Status::InvalidArgument("listen address '" + text + "' is not HOST:PORT");
  }
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return Status::InvalidArgument("listen address '" + text +
                                   "': write an IPv6 address in brackets, [ADDR]:PORT");
  }
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535) {
    return Status::InvalidArgument("listen address '" + text + "' has a bad port");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string numeric = host == "localhost" ? "127.0.0.1" : host;
  int r = ::getaddrinfo(numeric.c_str(), port.c_str(), &hints, &found);
  if (r != 0 || found == nullptr) {
    return Status::InvalidArgument("listen address '" + text + "': '" + host +
                                   "' is not a numeric IPv4 or IPv6 address (" +
                                   ::gai_strerror(r) + ")");
  }
  TcpAddress a;
  std::memcpy(&a.address, found->ai_addr, found->ai_addrlen);
  a.length = found->ai_addrlen;
  a.host = host;
  ::freeaddrinfo(found);
  if (a.address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a.address);
    a.loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  } else {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a.address);
    a.loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
                 (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127);
  }
  return a;
}

Result<int> ListenTcp(const TcpAddress& address, int backlog, uint16_t* bound_port) {
  const int family = address.address.ss_family;
  int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  ListenGuard guard(fd);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address.address), address.length) != 0) {
    return Errno("bind " + address.host);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  if (bound_port != nullptr) {
    *bound_port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                          : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  }
  if (::listen(fd, backlog) != 0) return Errno("listen " + address.host);
  return guard.Release();
}

Result<int> ListenLoopbackTcp(const std::string& address, int backlog, uint16_t* bound_port) {
  ARC_ASSIGN_OR_RETURN(ListenAddress la, ParseListenAddress(address));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  ListenGuard guard(fd);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(la.port);
  a.sin_addr.s_addr = htonl(la.ipv4_host_order);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return Errno("bind " + address);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  if (bound_port != nullptr) *bound_port = ntohs(a.sin_port);
  if (::listen(fd, backlog) != 0) return Errno("listen " + address);
  return guard.Release();
}

}  // namespace arcstore::net
