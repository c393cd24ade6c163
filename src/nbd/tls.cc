// TLS for the NBD server: theory of operation.
//
// Purpose. Let the server listen beyond loopback without letting in anyone
// who does not belong: the NBD protocol upgrades a plaintext connection to
// TLS in the option phase (NBD_OPT_STARTTLS), as nbdkit and qemu-nbd do,
// and each TLS client gets an identity (PSK username or verified
// certificate subject) that the access policy (access.h) maps to volumes.
//
// Model.
//
//   client                         server (connection thread)
//   ------                         --------------------------
//   greeting, flags  ------------> Handshake (plaintext, SocketTransport)
//   NBD_OPT_STARTTLS ------------> reply ACK; DISCARD every plaintext byte
//                                  buffered behind the option (Reader)
//   ClientHello ... Finished <---> TlsSession::Handshake on the same fd,
//                                  bounded by the connection's deadline
//   options (encrypted) ---------> Handshake again from a clean state
//   requests (encrypted) --------> Connection (unchanged: Transport calls)
//
// The TLS session sits inside SocketTransport (transport.h): once STARTTLS
// succeeds every Read*/WriteAll goes through TlsSession, so the option and
// request code never knows whether the bytes were encrypted.
//
// The STARTTLS injection class of bug: a man in the middle can append
// plaintext options after the client's STARTTLS; a server that keeps its
// read buffer across the upgrade would later treat those bytes as if they
// had come over TLS. Here the Reader's buffer is dropped when STARTTLS is
// acknowledged, and GnuTLS reads the socket directly for the handshake, so
// no byte received before the TLS handshake is ever parsed as an option.
// After STARTTLS the option state is reset as well (the spec forbids
// keeping per-export state such as meta contexts across it).
//
// Reads. GnuTLS reads a record as two exact reads of the socket (its
// 5-byte header, then its body), and a client sends each request as one or
// two records (header, payload): four system calls a request, plus polls
// to learn whether anything arrived. After the handshake the
// session reads ahead instead: one receive of up to kTlsReadAheadBytes
// takes every record that has arrived, and GnuTLS's reads are copies out
// of that buffer (Pull).
//
//   socket --recv, all that arrived--> in_ [ rec | rec | rec | par ]
//                                            |
//   GnuTLS pulls header, body <--------------+    (memcpy, no syscall)
//   decrypts into the caller's buffer
//
// A non-blocking read (RecvNow, for the connection's polling) is that one
// receive with MSG_DONTWAIT, in place of a poll; after the first record a
// read takes the further records that are whole in the buffer (RecordReady)
// and stops at a partial one rather than wait for the network. The buffer
// holds ciphertext only, of this session, after its handshake. With kernel
// TLS receive the kernel does all of this and GnuTLS reads the socket.
//
// Credentials. One TlsCredentials per server, loaded at Start: X.509 (the
// nbdkit/qemu directory layout) and/or PSK (psktool file). PSK keys are
// looked up by our own callback so that an unknown username is told apart
// from a wrong key in the stats. With verify_peer the client must present
// a certificate that GnuTLS verifies against ca-cert.pem (and ca-crl.pem)
// during the handshake; the reason (untrusted, expired, not yet valid,
// revoked) is logged. Without verify_peer no certificate is requested and
// an X.509 client has the empty identity.
//
// Threads. GnuTLS initialises itself once, when the library is loaded;
// nothing here is global. A session is driven by its connection's reader
// thread (handshake, Recv) and by one writer at a time (Send, under the
// connection's send lock). GnuTLS allows one sender and one receiver on a
// session at once provided receiving never has to send: tickets are off
// (GNUTLS_NO_TICKETS) and the server never renegotiates, so it does not.
//
// Limits. A handshake fails at the connection's handshake deadline (the
// socket's receive timeout is set to what is left before each read); the
// server bounds how many connections are in their handshake at once
// (ServerOptions::max_handshakes) and closes any past its deadline.
//
// Stats (module "nbd"): tls_handshakes, tls_fail_<reason>,
// starttls_plaintext_dropped_bytes; sessions by version and cipher (module
// "nbd_tls": version_TLS1_3, cipher_AES_256_GCM, and ktls_off / ktls_duplex
// / ktls_recv / ktls_send for kernel TLS offload, which GnuTLS uses when its
// system configuration enables it and the kernel allows; the code here is
// the same either way) and connections by identity (module
// "nbd_identity"); see nbd_stats.h.
#include "nbd/tls.h"

#include <gnutls/socket.h>
#include <gnutls/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/clock.h"

namespace arcstore::nbd {
namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Status GnutlsError(const std::string& what, int error) {
  return Status::InvalidArgument(what + ": " + gnutls_strerror(error));
}

// The PSK callback: the key of `username`, or failure (and the session
// notes that the user is unknown, for the stats).
int LookUpPsk(gnutls_session_t session, const char* username, gnutls_datum_t* key) {
  auto* s = static_cast<TlsSession*>(gnutls_session_get_ptr(session));
  const PskFile* psk = s->credentials()->psk();
  const std::vector<uint8_t>* k = psk == nullptr ? nullptr : psk->Find(username);
  if (k == nullptr) {
    s->NoteUnknownPskUser();
    return -1;
  }
  key->data = static_cast<unsigned char*>(gnutls_malloc(k->size()));
  if (key->data == nullptr) return -1;
  std::memcpy(key->data, k->data(), k->size());
  key->size = static_cast<unsigned int>(k->size());
  return 0;
}

void SetReceiveTimeoutNs(int fd, uint64_t timeout_ns) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
  tv.tv_usec = static_cast<suseconds_t>((timeout_ns % 1000000000) / 1000);
  if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

}  // namespace

const char* TlsFailureName(TlsFailure failure) {
  switch (failure) {
    case TlsFailure::kNone: return "none";
    case TlsFailure::kBadCertificate: return "bad_certificate";
    case TlsFailure::kUnknownPskIdentity: return "unknown_psk_identity";
    case TlsFailure::kTimeout: return "timeout";
    case TlsFailure::kOther: return "other";
    case TlsFailure::kCount: break;
  }
  return "unknown";
}

Result<std::shared_ptr<const TlsCredentials>> TlsCredentials::Load(const TlsOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  std::shared_ptr<TlsCredentials> c(new TlsCredentials(options));
  if (!options.certificates_dir.empty()) ARC_RETURN_IF_ERROR(c->LoadX509());
  if (!options.psk_file.empty()) ARC_RETURN_IF_ERROR(c->LoadPsk());
  std::string priority = options.priority;
  if (priority.empty()) {
    priority = options.psk_file.empty() ? "NORMAL" : "NORMAL:+ECDHE-PSK:+DHE-PSK:+PSK";
  }
  const char* error_at = nullptr;
  int r = gnutls_priority_init(&c->priority_, priority.c_str(), &error_at);
  if (r < 0) {
    return GnutlsError("TLS priority '" + priority + "' (at '" +
                           std::string(error_at == nullptr ? "" : error_at) + "')",
                       r);
  }
  return std::shared_ptr<const TlsCredentials>(std::move(c));
}

Status TlsCredentials::LoadX509() {
  const std::string& dir = options_.certificates_dir;
  const std::string ca = dir + "/ca-cert.pem", crl = dir + "/ca-crl.pem";
  const std::string cert = dir + "/server-cert.pem", key = dir + "/server-key.pem";
  for (const std::string& f : {cert, key}) {
    if (!FileExists(f)) return Status::NotFound("--tls-certificates: " + f + " is missing");
  }
  if (options_.verify_peer && !FileExists(ca)) {
    return Status::NotFound("--tls-verify-peer: " + ca + " is missing (the CA that signs clients)");
  }
  int r = gnutls_certificate_allocate_credentials(&x509_);
  if (r < 0) return GnutlsError("gnutls_certificate_allocate_credentials", r);
  if (FileExists(ca)) {
    r = gnutls_certificate_set_x509_trust_file(x509_, ca.c_str(), GNUTLS_X509_FMT_PEM);
    if (r < 0) return GnutlsError(ca, r);
  }
  if (FileExists(crl)) {
    r = gnutls_certificate_set_x509_crl_file(x509_, crl.c_str(), GNUTLS_X509_FMT_PEM);
    if (r < 0) return GnutlsError(crl, r);
  }
  r = gnutls_certificate_set_x509_key_file(x509_, cert.c_str(), key.c_str(), GNUTLS_X509_FMT_PEM);
  if (r < 0) return GnutlsError(cert + " with " + key, r);
  return Status::Ok();
}

Status TlsCredentials::LoadPsk() {
  ARC_ASSIGN_OR_RETURN(PskFile f, PskFile::Load(options_.psk_file));
  psk_ = std::make_unique<PskFile>(std::move(f));
  int r = gnutls_psk_allocate_server_credentials(&psk_creds_);
  if (r < 0) return GnutlsError("gnutls_psk_allocate_server_credentials", r);
  gnutls_psk_set_server_credentials_function(psk_creds_, LookUpPsk);
  return Status::Ok();
}

TlsCredentials::~TlsCredentials() {
  if (x509_ != nullptr) gnutls_certificate_free_credentials(x509_);
  if (psk_creds_ != nullptr) gnutls_psk_free_server_credentials(psk_creds_);
  if (priority_ != nullptr) gnutls_priority_deinit(priority_);
}

TlsSession::TlsSession(const TlsCredentials* credentials, int fd)
    : credentials_(credentials), fd_(fd) {}

TlsSession::~TlsSession() {
  if (session_ != nullptr) gnutls_deinit(session_);
}

TlsOutcome TlsSession::Handshake(uint64_t deadline_ns) {
  TlsOutcome out;
  int r = gnutls_init(&session_, GNUTLS_SERVER | GNUTLS_NO_SIGNAL | GNUTLS_NO_TICKETS);
  if (r < 0) {
    session_ = nullptr;
    return TlsOutcome::Failed(TlsFailure::kOther, std::string("gnutls_init: ") + gnutls_strerror(r));
  }
  gnutls_session_set_ptr(session_, this);
  gnutls_priority_set(session_, credentials_->priority_);
  if (credentials_->x509_ != nullptr) {
    gnutls_credentials_set(session_, GNUTLS_CRD_CERTIFICATE, credentials_->x509_);
    if (credentials_->options_.verify_peer) {
      gnutls_certificate_server_set_request(session_, GNUTLS_CERT_REQUIRE);
      gnutls_session_set_verify_cert(session_, nullptr, 0);
    }
  }
  if (credentials_->psk_creds_ != nullptr) {
    gnutls_credentials_set(session_, GNUTLS_CRD_PSK, credentials_->psk_creds_);
  }
  gnutls_transport_set_int(session_, fd_);
  while (true) {
    const uint64_t now = DefaultClock()->NowNs();
    if (now >= deadline_ns) return TlsOutcome::Failed(TlsFailure::kTimeout, "TLS handshake deadline passed");
    SetReceiveTimeoutNs(fd_, deadline_ns - now);
    r = gnutls_handshake(session_);
    if (r == GNUTLS_E_SUCCESS) break;
    if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) continue;  // deadline checked above
    out.failure = r == GNUTLS_E_TIMEDOUT ? TlsFailure::kTimeout : Classify(r);
    out.message = gnutls_strerror(r);
    // Tell the client why (a bad certificate, an unknown PSK user), so its
    // error names the cause rather than a dropped connection.
    gnutls_alert_send_appropriate(session_, r);
    const unsigned status = out.failure == TlsFailure::kBadCertificate
                                ? gnutls_session_get_verify_cert_status(session_)
                                : 0;
    if (status != 0) {
      gnutls_datum_t text{};
      if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) == 0) {
        out.message += std::string(": ") + reinterpret_cast<const char*>(text.data);
        gnutls_free(text.data);
      }
    }
    return out;
  }
  Describe(&out);
  // From now on GnuTLS pulls from the read-ahead buffer, unless the kernel
  // receives for it. The handshake's own reads took exactly what it needed,
  // so nothing read before this point is in the buffer.
  if ((gnutls_transport_is_ktls_enabled(session_) & GNUTLS_KTLS_RECV) == 0) {
    in_.resize(kTlsReadAheadBytes);
    gnutls_transport_set_ptr2(session_, this,
                              reinterpret_cast<gnutls_transport_ptr_t>(static_cast<intptr_t>(fd_)));
    gnutls_transport_set_pull_function(session_, Pull);
    gnutls_transport_set_pull_timeout_function(session_, PullTimeout);
  }
  return out;
}

TlsFailure TlsSession::Classify(int error) const {
  if (unknown_psk_user_) return TlsFailure::kUnknownPskIdentity;
  switch (error) {
    case GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR:
    case GNUTLS_E_CERTIFICATE_ERROR:
    case GNUTLS_E_NO_CERTIFICATE_FOUND:
    case GNUTLS_E_CERTIFICATE_REQUIRED:
      return TlsFailure::kBadCertificate;
    default: return TlsFailure::kOther;
  }
}

void TlsSession::Describe(TlsOutcome* out) const {
  out->version = gnutls_protocol_get_name(gnutls_protocol_get_version(session_));
  const char* cipher = gnutls_cipher_get_name(gnutls_cipher_get(session_));
  out->cipher = cipher == nullptr ? "unknown" : cipher;
  switch (gnutls_transport_is_ktls_enabled(session_)) {
    case GNUTLS_KTLS_DUPLEX: out->ktls = "duplex"; break;
    case GNUTLS_KTLS_RECV: out->ktls = "recv"; break;
    case GNUTLS_KTLS_SEND: out->ktls = "send"; break;
    default: out->ktls = "off"; break;
  }
  if (gnutls_auth_get_type(session_) == GNUTLS_CRD_PSK) {
    const char* user = gnutls_psk_server_get_username(session_);
    out->identity = user == nullptr ? "" : user;
    return;
  }
  if (!credentials_->options_.verify_peer) return;
  unsigned count = 0;
  const gnutls_datum_t* peers = gnutls_certificate_get_peers(session_, &count);
  if (peers == nullptr || count == 0) return;
  gnutls_x509_crt_t crt;
  if (gnutls_x509_crt_init(&crt) < 0) return;
  gnutls_datum_t dn{};
  if (gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) == 0 &&
      gnutls_x509_crt_get_dn3(crt, &dn, 0) == 0) {
    out->identity.assign(reinterpret_cast<const char*>(dn.data), dn.size);
    gnutls_free(dn.data);
  }
  gnutls_x509_crt_deinit(crt);
}

Result<size_t> TlsSession::Recv(uint8_t* buf, size_t n) {
  while (true) {
    ssize_t r = gnutls_record_recv(session_, buf, n);
    if (r > 0) return static_cast<size_t>(r) + RecvMore(buf + r, n - static_cast<size_t>(r));
    if (r == 0) return size_t{0};
    if (r == GNUTLS_E_INTERRUPTED) continue;
    if (r == GNUTLS_E_AGAIN) return Status::Aborted("read timed out");
    // A client that closes without a close notification has still ended
    // the stream, as a plaintext one would.
    if (r == GNUTLS_E_PREMATURE_TERMINATION) return size_t{0};
    return Status::IOError(std::string("TLS receive: ") + gnutls_strerror(static_cast<int>(r)));
  }
}

Result<size_t> TlsSession::RecvNow(uint8_t* buf, size_t n) {
  if (Pending() == 0 && ReadAheadBytes() == 0) {
    if (read_ahead()) {
      // The receive a poll would have cost, taking what has arrived. At
      // the end of the stream or on an error, Recv meets it again.
      if (FillReadAhead(MSG_DONTWAIT) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return Status::Busy("nothing to read yet");
      }
    } else if (!SocketReadable()) {
      return Status::Busy("nothing to read yet");
    }
  }
  // A record that has arrived in part is waited for, briefly.
  return Recv(buf, n);
}

size_t TlsSession::RecvMore(uint8_t* buf, size_t n) {
  size_t got = 0;
  while (got < n && (Pending() > 0 || RecordReady())) {
    const ssize_t r = gnutls_record_recv(session_, buf + got, n - got);
    if (r == GNUTLS_E_INTERRUPTED) continue;
    // The end of the stream or an error: the next read reports it.
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

bool TlsSession::SocketReadable() const {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

bool TlsSession::RecordReady() const {
  if (!read_ahead()) return SocketReadable();
  // GnuTLS pulls a record's 5-byte header, then exactly its body, so what
  // is read ahead starts at a record: type, version, 16-bit length.
  constexpr size_t kHeaderBytes = 5;
  const size_t held = ReadAheadBytes();
  if (held < kHeaderBytes) return false;
  const uint8_t* h = in_.data() + in_begin_;
  const size_t body = (size_t{h[3]} << 8) | h[4];
  return held >= kHeaderBytes + body;
}

ssize_t TlsSession::FillReadAhead(int flags) {
  in_begin_ = in_end_ = 0;
  while (true) {
    const ssize_t r = ::recv(fd_, in_.data(), in_.size(), flags);
    if (r < 0 && errno == EINTR) continue;
    if (r > 0) in_end_ = static_cast<size_t>(r);
    return r;
  }
}

ssize_t TlsSession::Pull(gnutls_transport_ptr_t self, void* data, size_t n) {
  auto* s = static_cast<TlsSession*>(self);
  if (s->ReadAheadBytes() == 0) {
    // Waits as a plain read would (the socket's receive timeout applies).
    const ssize_t r = s->FillReadAhead(0);
    if (r < 0) {
      gnutls_transport_set_errno(s->session_, errno);
      return -1;
    }
    if (r == 0) return 0;
  }
  const size_t take = std::min(n, s->ReadAheadBytes());
  std::memcpy(data, s->in_.data() + s->in_begin_, take);
  s->in_begin_ += take;
  return static_cast<ssize_t>(take);
}

int TlsSession::PullTimeout(gnutls_transport_ptr_t self, unsigned int ms) {
  auto* s = static_cast<TlsSession*>(self);
  if (s->ReadAheadBytes() > 0) return 1;
  pollfd p{s->fd_, POLLIN, 0};
  const int timeout_ms = ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : static_cast<int>(ms);
  const int r = ::poll(&p, 1, timeout_ms);
  if (r < 0) gnutls_transport_set_errno(s->session_, errno);
  return r;
}

size_t TlsSession::Pending() const { return gnutls_record_check_pending(session_); }

Status TlsSession::SendAll(const iovec* iov, int count) {
  // Small replies go out as one record (corked); large payloads record by
  // record straight from the caller's buffers.
  size_t total = 0;
  for (int i = 0; i < count; i++) total += iov[i].iov_len;
  const bool cork = count > 1 && total <= 64 * 1024;
  if (cork) gnutls_record_cork(session_);
  for (int i = 0; i < count; i++) {
    const uint8_t* p = static_cast<const uint8_t*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    while (left > 0) {
      ssize_t w = gnutls_record_send(session_, p, left);
      if (w == GNUTLS_E_INTERRUPTED || w == GNUTLS_E_AGAIN) continue;
      if (w < 0) {
        return Status::IOError(std::string("TLS send: ") + gnutls_strerror(static_cast<int>(w)));
      }
      p += w;
      left -= static_cast<size_t>(w);
    }
  }
  if (cork) {
    while (true) {
      int r = gnutls_record_uncork(session_, GNUTLS_RECORD_WAIT);
      if (r >= 0) break;
      if (r == GNUTLS_E_INTERRUPTED || r == GNUTLS_E_AGAIN) continue;
      return Status::IOError(std::string("TLS send: ") + gnutls_strerror(r));
    }
  }
  return Status::Ok();
}

}  // namespace arcstore::nbd
