#include "nbd/options.h"

#include <cerrno>
#include <cstdlib>
#include <set>
#include <sys/un.h>

#include "nbd/listen.h"
#include "nbd/protocol.h"

namespace arcstore::nbd {
namespace {

Status Bad(const char* option, const std::string& why) {
  return Status::InvalidArgument(std::string("nbd option ") + option + ": " + why);
}

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

Status Export::Validate() const {
  if (name.size() > kMaxStringBytes) return Bad("export", "name longer than 4096 bytes");
  if (name.find('\0') != std::string::npos) return Bad("export", "name contains NUL");
  if (description.size() > kMaxStringBytes) {
    return Bad("export", "description of '" + name + "' longer than 4096 bytes");
  }
  if (volume == nullptr) return Bad("export", "'" + name + "' has no volume");
  return Status::Ok();
}

Status ServerOptions::Validate() const {
  if (socket_path.empty() && listen_addresses.empty()) {
    return Bad("socket_path/listen_addresses", "give a unix socket path or a TCP address");
  }
  if (!socket_path.empty() && socket_path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return Bad("socket_path", "longer than " + std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
                                  " bytes");
  }
  for (const std::string& text : listen_addresses) {
    Result<TcpAddress> a = ParseTcpAddress(text);
    if (!a.ok()) return Bad("listen_addresses", a.status().message());
    if (!a->loopback && tls.mode != TlsMode::kRequire && !allow_insecure_network) {
      return Bad("listen_addresses",
                 "'" + text + "' is not a loopback address; serving beyond this machine needs "
                 "--tls require (plaintext NBD lets anyone who reaches the port read and "
                 "write the volumes), or --insecure to accept that");
    }
  }
  Status t = tls.Validate();
  if (!t.ok()) return Bad("tls", t.message());
  if (max_handshakes < 1 || max_handshakes > 65536) {
    return Bad("max_handshakes", "must be in [1, 65536]");
  }
  if (socket_mode > 0777) return Bad("socket_mode", "not a permission mode (0..0777)");
  if (max_connections < 1 || max_connections > 65536) {
    return Bad("max_connections", "must be in [1, 65536]");
  }
  if (max_in_flight_per_connection < 1 || max_in_flight_per_connection > 4096) {
    return Bad("max_in_flight_per_connection", "must be in [1, 4096]");
  }
  if (max_payload_bytes < kMiB || max_payload_bytes > 256 * kMiB) {
    return Bad("max_payload_bytes", "must be in [1 MiB, 256 MiB]");
  }
  if (max_in_flight_bytes_per_connection < max_payload_bytes) {
    return Bad("max_in_flight_bytes_per_connection", "must be at least max_payload_bytes");
  }
  if (max_block_status_bytes < kMiB || max_block_status_bytes > 3 * kGiB) {
    return Bad("max_block_status_bytes", "must be in [1 MiB, 3 GiB]");
  }
  if (handshake_timeout_ns < kNsPerMs) return Bad("handshake_timeout_ns", "must be at least 1 ms");
  if (poll_window_ns > kNsPerMs) return Bad("poll_window_ns", "must be at most 1 ms");
  if (max_pollers > 1024) return Bad("max_pollers", "must be in [0, 1024] (0: CPUs - 1)");
  return Status::Ok();
}

Status ValidateExports(const std::vector<Export>& exports, const ServerOptions& options) {
  if (exports.empty()) return Bad("exports", "nothing to serve");
  std::set<std::string> names;
  for (const Export& e : exports) {
    ARC_RETURN_IF_ERROR(e.Validate());
    if (!names.insert(e.name).second) return Bad("exports", "'" + e.name + "' named twice");
    uint32_t record = e.volume->info().record_size_bytes;
    if (record == 0 || (record & (record - 1)) != 0 || record > options.max_payload_bytes) {
      return Bad("exports", "'" + e.name + "' has record size " + std::to_string(record) +
                                ", not a power of two within max_payload_bytes");
    }
  }
  if (!options.default_export.empty() && names.count(options.default_export) == 0) {
    return Bad("default_export", "'" + options.default_export + "' is not an export");
  }
  return Status::Ok();
}

}  // namespace arcstore::nbd
