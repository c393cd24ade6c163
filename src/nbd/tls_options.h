// TlsOptions: how an NBD server offers TLS (NBD_OPT_STARTTLS), and the
// credentials it loads for it. A plain value type with Validate(); no
// internal synchronisation.
//
//   mode off      STARTTLS is answered NBD_REP_ERR_UNSUP; no credentials.
//   mode on       TLS is offered; a client may also stay in plaintext.
//   mode require  every option before STARTTLS except ABORT is answered
//                 NBD_REP_ERR_TLS_REQD (NBD_OPT_EXPORT_NAME: disconnect).
//
// Credentials: X.509 from a directory laid out as nbdkit and qemu expect
// (ca-cert.pem, server-cert.pem, server-key.pem, optional ca-crl.pem),
// and/or pre-shared keys from a psktool file (psk_file.h). At least one
// when the mode is not off.
#pragma once

#include <cstdint>
#include <string>

#include "arcstore/status.h"
#include "base/result.h"

namespace arcstore::nbd {

enum class TlsMode { kOff, kOn, kRequire };

// "off", "on", "require"; InvalidArgument names the text otherwise.
Result<TlsMode> ParseTlsMode(const std::string& text);
const char* TlsModeName(TlsMode mode);

struct TlsOptions {
  TlsMode mode = TlsMode::kOff;
  // Directory with ca-cert.pem, server-cert.pem, server-key.pem and
  // optionally ca-crl.pem; empty: no X.509.
  std::string certificates_dir;
  // Ask every X.509 client for a certificate signed by ca-cert.pem (not
  // expired, not yet valid, or revoked by ca-crl.pem: refused). Its
  // subject is then the connection's identity. Without it a client's
  // certificate is not requested and X.509 clients have no identity.
  bool verify_peer = false;
  // psktool format: one "username:hexkey" a line; empty: no PSK.
  std::string psk_file;
  // GnuTLS priority string; empty: the library's defaults, with the PSK
  // key exchanges added when a PSK file is given.
  std::string priority;

  Status Validate() const;
};

}  // namespace arcstore::nbd
