// Server: where it listens (Listen, address, addresses) and its access
// policy (ReloadAccess). See server.cc for the theory of operation.
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "net/listen.h"
#include "nbd/server.h"

namespace arcstore::nbd {
namespace {

std::string FormatHostPort(const net::TcpAddress& a, uint16_t port) {
  const bool v6 = a.address.ss_family == AF_INET6;
  return (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(port);
}

}  // namespace

Status Server::ReloadAccess() {
  if (options_.access_file.empty()) {
    return Status::InvalidArgument("no access file to reload (serve without --access)");
  }
  ARC_ASSIGN_OR_RETURN(std::shared_ptr<const AccessPolicy> p,
                       AccessPolicy::Load(options_.access_file));
  MutexLock l(&access_mu_);
  access_ = std::move(p);
  return Status::Ok();
}

std::shared_ptr<const AccessPolicy> Server::access() {
  MutexLock l(&access_mu_);
  return access_;
}

Status Server::Listen() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Status::IOError(std::string("eventfd: ") + std::strerror(errno));
  // Each listener joins the list as soon as it exists, so that a later
  // failure leaves nothing behind (the destructor closes them).
  if (!options_.socket_path.empty()) {
    ARC_ASSIGN_OR_RETURN(int fd, net::ListenUnix(options_.socket_path, options_.socket_mode, 128));
    listeners_.push_back({fd, true, options_.socket_path});
    bound_socket_file_ = true;
  }
  for (const std::string& text : options_.listen_addresses) {
    ARC_ASSIGN_OR_RETURN(net::TcpAddress a, net::ParseTcpAddress(text));
    uint16_t port = 0;
    ARC_ASSIGN_OR_RETURN(int fd, net::ListenTcp(a, 1024, &port));
    listeners_.push_back({fd, false, FormatHostPort(a, port)});
    if (port_ == 0) port_ = port;
  }
  return Status::Ok();
}

std::string Server::address() const { return listeners_.empty() ? "" : listeners_[0].address; }

std::vector<std::string> Server::addresses() const {
  std::vector<std::string> out;
  for (const Listener& l : listeners_) out.push_back(l.address);
  return out;
}

}  // namespace arcstore::nbd
