// Handshake, the parts that decide who the client is and what it may see:
// NBD_OPT_STARTTLS (tls.cc has the theory), the refusals of --tls require
// before it, and the access policy's filter on exports (access.h). The rest
// of the option phase is in handshake.cc.
#include "nbd/handshake.h"

#include "nbd/protocol.h"

namespace arcstore::nbd {

Handshake::Next Handshake::HandleStartTls(const std::vector<uint8_t>& data) {
  if (security_.mode == TlsMode::kOff || security_.credentials == nullptr) {
    return Error(kOptStartTls, kRepErrUnsup, ErrorKind::kUnknownOption,
                 "this server does not offer TLS");
  }
  if (!data.empty()) {
    return Error(kOptStartTls, kRepErrInvalid, ErrorKind::kInvalidOption,
                 "NBD_OPT_STARTTLS carries no data");
  }
  if (tls_active_) {
    return Error(kOptStartTls, kRepErrInvalid, ErrorKind::kInvalidOption,
                 "TLS is already negotiated");
  }
  if (!Reply(kOptStartTls, kRepAck)) return Next::kClose;
  // Nothing the client sent before its TLS handshake may be read as if it
  // came over TLS (the STARTTLS injection bug): drop it.
  const size_t dropped = reader_->DiscardBuffered();
  if (dropped > 0) stats_->starttls_plaintext_dropped_bytes->Add(dropped);
  TlsOutcome o = transport_->StartTls(security_.credentials, security_.deadline_ns);
  if (o.failure != TlsFailure::kNone) {
    // Past the deadline the server may have closed the stream under the TLS
    // handshake: whatever GnuTLS saw, the handshake ran out of time.
    if (Ended(o.failure == TlsFailure::kTimeout) == ErrorKind::kHandshakeTimeout) {
      o.failure = TlsFailure::kTimeout;
      stats_->Error(ErrorKind::kHandshakeTimeout);
    }
    stats_->TlsFailed(o.failure);
    close_reason_ = Status::Aborted("TLS handshake failed (" +
                                    std::string(TlsFailureName(o.failure)) + "): " + o.message);
    ReportRefusal(close_reason_.message());
    return Next::kClose;
  }
  stats_->TlsSucceeded(o);
  tls_active_ = true;
  identity_ = o.identity.empty() ? kAnonymousIdentity : o.identity;
  // The spec forbids keeping per-export state across STARTTLS; nothing
  // negotiated in plaintext is kept.
  structured_ = false;
  meta_export_ = -1;
  meta_allocation_ = false;
  return Next::kContinue;
}

void Handshake::ReportRefusal(const std::string& why) const {
  if (options_.on_security_refusal) options_.on_security_refusal(security_.peer, why);
}

bool Handshake::RefuseWithoutTls(uint32_t option, Next* next) {
  if (security_.mode != TlsMode::kRequire || tls_active_ || security_.unix_socket) return false;
  stats_->Error(ErrorKind::kTlsRequired);
  if (option == kOptExportName) {  // it cannot be answered with an error
    close_reason_ = Status::Aborted("NBD_OPT_EXPORT_NAME before STARTTLS; TLS is required");
    *next = Next::kClose;
    return true;
  }
  const std::string m = "TLS is required: send NBD_OPT_STARTTLS first";
  Reply(option, kRepErrTlsReqd, m.data(), m.size());
  *next = Next::kContinue;
  return true;
}

Access Handshake::AccessTo(size_t index) const {
  const Export& e = exports_[index];
  Access a = security_.access->Lookup(identity_, e.name);
  if (a == Access::kReadWrite && e.read_only) a = Access::kReadOnly;
  return a;
}

int Handshake::FindExport(const std::string& name) const {
  std::string want = name;
  if (want.empty()) {
    want = options_.default_export.empty() ? exports_[0].name : options_.default_export;
  }
  for (size_t i = 0; i < exports_.size(); i++) {
    if (exports_[i].name != want) continue;
    if (AccessTo(i) == Access::kNone) {
      stats_->Error(ErrorKind::kDeniedVolume);
      ReportRefusal("identity '" + identity_ + "' may not open volume '" + want + "'");
      return -1;
    }
    return static_cast<int>(i);
  }
  return -1;
}

}  // namespace arcstore::nbd
