#include "nbd/tls_options.h"

namespace arcstore::nbd {

Result<TlsMode> ParseTlsMode(const std::string& text) {
  if (text == "off") return TlsMode::kOff;
  if (text == "on") return TlsMode::kOn;
  if (text == "require") return TlsMode::kRequire;
  return Status::InvalidArgument("TLS mode '" + text + "' is not off, on or require");
}

const char* TlsModeName(TlsMode mode) {
  switch (mode) {
    case TlsMode::kOff: return "off";
    case TlsMode::kOn: return "on";
    case TlsMode::kRequire: return "require";
  }
  return "unknown";
}

Status TlsOptions::Validate() const {
  const bool credentials = !certificates_dir.empty() || !psk_file.empty();
  if (mode == TlsMode::kOff) {
    if (credentials || verify_peer) {
      return Status::InvalidArgument(
          "tls: certificates, a PSK file or peer verification given with TLS off "
          "(add --tls on or --tls require)");
    }
    return Status::Ok();
  }
  if (!credentials) {
    return Status::InvalidArgument(std::string("tls ") + TlsModeName(mode) +
                                   ": give --tls-certificates DIR and/or --tls-psk FILE");
  }
  if (verify_peer && certificates_dir.empty()) {
    return Status::InvalidArgument("tls: --tls-verify-peer needs --tls-certificates DIR");
  }
  return Status::Ok();
}

}  // namespace arcstore::nbd
