// TLS for the NBD server, over GnuTLS: the server's credentials
// (TlsCredentials) and one connection's TLS session (TlsSession). See
// tls.cc for the theory of operation.
//
//   auto creds = TlsCredentials::Load(options.tls);      // once, at Start
//   TlsSession s(creds.get(), fd);                       // per STARTTLS
//   TlsOutcome o = s.Handshake(deadline_ns);             // identity, reason
//   s.Recv(...) / s.Send(...)                            // after success
//
// Thread-safety: TlsCredentials is immutable after Load and shared by every
// connection (GnuTLS credentials are safe to use from many sessions at
// once). A TlsSession belongs to one connection: Handshake by its reader
// thread before anything else; afterwards Recv by the reader thread and
// Send by one writer at a time, concurrently with each other (GnuTLS allows
// one sender and one receiver on a session; the session sends nothing from
// Recv because tickets are off and the server never renegotiates).
// TlsSession does not own the descriptor.
#pragma once

#include <gnutls/gnutls.h>
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "nbd/psk_file.h"
#include "nbd/tls_options.h"

namespace arcstore::nbd {

// Ciphertext a session reads ahead from its socket at most: every record a
// pipelining client has sent, up to seven full-sized TLS records (16 KiB
// of data and their headers and tags each).
inline constexpr size_t kTlsReadAheadBytes = 128 * 1024;

// Why a TLS handshake failed (counted in module "nbd" as tls_fail_<name>).
enum class TlsFailure {
  kNone,
  kBadCertificate,    // the client's certificate is missing, untrusted,
                      // expired, not yet valid or revoked
  kUnknownPskIdentity,
  kTimeout,           // the handshake's deadline passed
  kOther,             // anything else: a wrong key, garbage, a disconnect
  kCount,
};
const char* TlsFailureName(TlsFailure failure);

struct TlsOutcome {
  TlsFailure failure = TlsFailure::kNone;
  std::string message;   // what GnuTLS said, for the log
  std::string identity;  // PSK username or certificate subject (RFC 4514)
  std::string version;   // "TLS1.3"
  std::string cipher;    // "AES-256-GCM"
  // Kernel TLS offload of this session: "off", "recv", "send" or "duplex"
  // (GnuTLS moves the record layer into the kernel when its configuration
  // enables ktls and the kernel has the tls module).
  std::string ktls = "off";

  static TlsOutcome Failed(TlsFailure failure, std::string message) {
    TlsOutcome o;
    o.failure = failure;
    o.message = std::move(message);
    return o;
  }
};

class TlsCredentials {
 public:
  // Loads the credentials `options` name; errors name the file and why.
  static Result<std::shared_ptr<const TlsCredentials>> Load(const TlsOptions& options);
  ~TlsCredentials();
  TlsCredentials(const TlsCredentials&) = delete;
  TlsCredentials& operator=(const TlsCredentials&) = delete;

  const TlsOptions& options() const { return options_; }
  const PskFile* psk() const { return psk_.get(); }

 private:
  friend class TlsSession;
  explicit TlsCredentials(TlsOptions options) : options_(std::move(options)) {}
  Status LoadX509();
  Status LoadPsk();

  const TlsOptions options_;
  gnutls_certificate_credentials_t x509_ = nullptr;
  gnutls_psk_server_credentials_t psk_creds_ = nullptr;
  std::unique_ptr<PskFile> psk_;
  gnutls_priority_t priority_ = nullptr;
};

class TlsSession {
 public:
  TlsSession(const TlsCredentials* credentials, int fd);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Runs the server side of the handshake; it fails at `deadline_ns`
  // (steady clock). On failure the session must not be used further.
  TlsOutcome Handshake(uint64_t deadline_ns);

  // As Transport::ReadSome: bytes, 0 at end of stream, Aborted on the
  // socket's read timeout, IOError otherwise. Waits for one record, then
  // takes every further whole record already received, up to `n` bytes:
  // a client's pipelined requests come in one read, as over plaintext,
  // not one record per read.
  Result<size_t> Recv(uint8_t* buf, size_t n);
  // As Transport::ReadSomeNow: Recv when something has arrived, else Busy
  // at once (one non-blocking receive, no poll).
  Result<size_t> RecvNow(uint8_t* buf, size_t n);
  // Decrypted bytes already held (readable without touching the socket).
  size_t Pending() const;
  // Ciphertext read ahead and not yet given to GnuTLS.
  size_t ReadAheadBytes() const { return in_end_ - in_begin_; }
  Status SendAll(const iovec* iov, int count);

  // Set by the PSK callback when the client named an unknown user.
  void NoteUnknownPskUser() { unknown_psk_user_ = true; }
  const TlsCredentials* credentials() const { return credentials_; }

 private:
  // Recv's second half: records already held, into `buf`.
  size_t RecvMore(uint8_t* buf, size_t n);
  // Whether a record can be read without waiting for the network: a whole
  // one is read ahead (or, with the kernel receiving, the socket has data).
  bool RecordReady() const;
  // Whether the socket has bytes to read (a poll that does not wait).
  bool SocketReadable() const;
  // GnuTLS's transport reads once read-ahead is on (see tls.cc).
  static ssize_t Pull(gnutls_transport_ptr_t self, void* data, size_t n);
  static int PullTimeout(gnutls_transport_ptr_t self, unsigned int ms);
  // One receive into the empty read-ahead buffer: what recv returned.
  ssize_t FillReadAhead(int flags);
  TlsFailure Classify(int error) const;
  void Describe(TlsOutcome* out) const;

  const TlsCredentials* const credentials_;
  const int fd_;
  gnutls_session_t session_ = nullptr;
  bool unknown_psk_user_ = false;
  // Whether GnuTLS pulls from in_ (the read-ahead buffer is made then).
  bool read_ahead() const { return !in_.empty(); }

  // Ciphertext received and not yet pulled by GnuTLS: in_[in_begin_,
  // in_end_). Empty until the handshake succeeds without kernel receive.
  std::vector<uint8_t> in_;
  size_t in_begin_ = 0, in_end_ = 0;
};

}  // namespace arcstore::nbd
