#include "nbd/options.h"

#include <set>
#include <sys/un.h>

#include "net/listen.h"
#include "nbd/protocol.h"

namespace arcstore::nbd {
namespace {

Status Bad(const char* option, const std::string& why) {
  return Status::InvalidArgument(std::string("nbd option ") + option + ": " + why);
}

}  // namespace

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
    Result<net::TcpAddress> a = net::ParseTcpAddress(text);
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
