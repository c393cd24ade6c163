// Handshake: the fixed newstyle option haggling of one NBD connection.
//
// Runs from the server's greeting to the moment transmission starts
// (NBD_OPT_GO acknowledged, or NBD_OPT_EXPORT_NAME answered), or until the
// connection must close (NBD_OPT_ABORT, a hard-disconnect case, the client
// leaving). See server.cc for the protocol overview and the error table.
//
// Thread-safety: a Handshake belongs to its connection's reader thread.
// It borrows the transport, reader, exports, options and stats, which must
// outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <memory>

#include "nbd/access.h"
#include "nbd/nbd_stats.h"
#include "nbd/options.h"
#include "nbd/tls.h"
#include "nbd/transport.h"

namespace arcstore::nbd {

// What the handshake agreed on.
struct Negotiated {
  size_t export_index = 0;
  bool structured_replies = false;
  bool allocation_context = false;  // base:allocation selected for this export
  bool read_only = false;           // the export's, or the identity's grant
  uint16_t transmission_flags = 0;
  bool tls = false;                 // the session runs over TLS
  std::string identity;             // access.h: a name, @anonymous or @unix
};

// Who the client is and what it must do before it may see exports: the
// server's TLS mode and credentials (null: TLS off), whether it came over
// the unix socket (exempt from kRequire: the socket file's permissions
// decide), the access policy, and the handshake's deadline (steady clock).
struct HandshakeSecurity {
  TlsMode mode = TlsMode::kOff;
  const TlsCredentials* credentials = nullptr;
  bool unix_socket = false;
  std::shared_ptr<const AccessPolicy> access = AccessPolicy::AllowAll();
  uint64_t deadline_ns = UINT64_MAX;
  std::string peer;  // the client's address, for ServerOptions::on_security_refusal
};

// The transmission flags of an export (read-only or not) for a client that
// did (or did not) negotiate structured replies.
uint16_t TransmissionFlags(bool read_only, bool structured_replies);

// Limits of the handshake.
inline constexpr uint32_t kMaxOptionDataBytes = 64 * 1024;  // larger: hard disconnect
inline constexpr uint32_t kMaxOptionsPerHandshake = 1024;   // more: hard disconnect
inline constexpr uint32_t kMaxMetaQueries = 128;            // more: NBD_REP_ERR_TOO_BIG

class Handshake {
 public:
  // With `refuse` set (the server is at max_connections) every option but
  // NBD_OPT_ABORT is answered NBD_REP_ERR_POLICY, so the client learns why.
  Handshake(Transport* transport, Reader* reader, const std::vector<Export>* exports,
            const ServerOptions* options, NbdStats* stats, bool refuse,
            HandshakeSecurity security = {});

  // OK: transmission starts with `*out`. Aborted: the session ended as the
  // protocol allows (abort, refusal). Any other error: the client broke the
  // protocol or left; the connection must close. Errors are counted.
  Status Run(Negotiated* out);

 private:
  enum class Next { kContinue, kTransmit, kClose };

  Status SendGreeting();
  Status ReadClientFlags();
  Next HandleOption(uint32_t option, const std::vector<uint8_t>& data, Negotiated* out);
  Next HandleExportName(const std::vector<uint8_t>& data, Negotiated* out);
  Next HandleInfoOrGo(uint32_t option, const std::vector<uint8_t>& data, Negotiated* out);
  Next HandleList(const std::vector<uint8_t>& data);
  Next HandleStructuredReply(const std::vector<uint8_t>& data);
  Next HandleMetaContext(uint32_t option, const std::vector<uint8_t>& data);
  // NBD_OPT_STARTTLS: acknowledge, drop buffered plaintext, run the TLS
  // handshake, start the options again from a clean state.
  Next HandleStartTls(const std::vector<uint8_t>& data);
  // Before TLS under kRequire: the option is refused (true) with
  // NBD_REP_ERR_TLS_REQD, or the session closes (NBD_OPT_EXPORT_NAME).
  bool RefuseWithoutTls(uint32_t option, Next* next);
  // Tells ServerOptions::on_security_refusal, when set, why this client is
  // turned away.
  void ReportRefusal(const std::string& why) const;
  // Index of the export `name` selects and the client may open, or -1.
  // An export it may not open counts as err_denied_volume.
  int FindExport(const std::string& name) const;
  // The client's access to export `index`.
  Access AccessTo(size_t index) const;
  // Sends one option reply; false (and the session ends) if it cannot.
  bool Reply(uint32_t option, uint32_t type, const void* payload = nullptr, size_t length = 0);
  Next Error(uint32_t option, uint32_t type, ErrorKind kind, const std::string& message);
  Negotiated Agree(size_t export_index) const;
  // Why the client's stream ended: kHandshakeTimeout when a read timed out
  // or the deadline has passed (the server closes a handshake at its
  // deadline), kHandshakeDisconnect otherwise. Each failed handshake counts
  // one of them, here, whichever side saw the deadline first.
  ErrorKind Ended(bool timed_out) const;

  Transport* const transport_;
  Reader* const reader_;
  const std::vector<Export>& exports_;
  const ServerOptions& options_;
  NbdStats* const stats_;
  const bool refuse_;
  const HandshakeSecurity security_;
  bool tls_active_ = false;
  std::string identity_;
  bool no_zeroes_ = false;
  bool structured_ = false;
  bool send_failed_ = false;
  bool quiet_send_failure_ = false;
  // The last NBD_OPT_SET_META_CONTEXT: its export and whether it selected
  // base:allocation.
  int meta_export_ = -1;
  bool meta_allocation_ = false;
  Status close_reason_;
};

}  // namespace arcstore::nbd
