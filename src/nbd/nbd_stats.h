// The NBD server's stats, declared once in a stats::Registry.
//
// Module "nbd" holds the server-wide stats: requests run inline or sent to
// the engine on the volume's "may wait", connections (accepted, refused,
// active), handshakes, protocol errors by kind, and TLS: handshakes and
// failures by reason (tls_fail_<reason>), plaintext dropped at STARTTLS.
// Module "nbd_tls" counts sessions by version, cipher and kernel offload
// ("version_TLS1_3", "cipher_AES_256_GCM", "ktls_off"), module "nbd_identity" connections that reached
// transmission by identity (names made of [A-Za-z0-9_]; at most
// kMaxIdentityStats identities, the rest in "other"). Each export has a module
// "nbd_export.<name>" with, per command, ops, bytes, errors and a latency
// histogram (request read to reply sent), plus its open connections.
//
// Thread-safety: the stat pointers are updated lock-free from any thread.
// The registry must outlive the NbdStats; ~NbdStats removes its modules.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nbd/adaptive_poll.h"
#include "base/thread_annotations.h"
#include "nbd/protocol.h"
#include "nbd/tls.h"
#include "stats/registry.h"

namespace arcstore::nbd {

// Kinds of protocol and client errors, counted in module "nbd".
enum class ErrorKind {
  kBadMagic,             // request or option without its magic: hard disconnect
  kBadClientFlags,       // unknown handshake client flags: hard disconnect
  kUnknownOption,        // answered NBD_REP_ERR_UNSUP
  kInvalidOption,        // malformed or out-of-order option: NBD_REP_ERR_INVALID
  kUnknownExport,        // NBD_REP_ERR_UNKNOWN (or a disconnect after EXPORT_NAME)
  kOversizedOption,      // option data past the limit: hard disconnect
  kTooManyOptions,       // option count past the limit: hard disconnect
  kUnknownCommand,       // NBD_EINVAL
  kBadFlags,             // flag not valid for the command: NBD_EINVAL
  kOutOfRange,           // offset + length past the end or overflowing
  kOversizedPayload,     // READ/WRITE longer than the maximum payload
  kReadOnly,             // write-type command on a read-only export: NBD_EPERM
  kNotNegotiated,        // BLOCK_STATUS without a meta context, and the like
  kHandshakeDisconnect,  // the client left during the handshake
  kRequestDisconnect,    // the client left inside a request (header or payload)
  kHandshakeTimeout,     // the handshake took longer than allowed
  kVolumeError,          // the volume failed an operation
  kSendFailed,           // a reply could not be written (client gone)
  kTlsRequired,          // an option before STARTTLS under --tls require
  kDeniedVolume,         // an export the client's identity may not open
  kCount,
};
const char* ErrorKindName(ErrorKind kind);

struct CommandStats {
  stats::Counter* ops = nullptr;
  stats::Counter* bytes = nullptr;
  stats::Counter* errors = nullptr;
  stats::Histogram* latency_ns = nullptr;
};

struct ExportStats {
  std::array<CommandStats, kNumCommands> commands;
  stats::Gauge* connections = nullptr;
};

class NbdStats {
 public:
  NbdStats(stats::Registry* registry, const std::vector<std::string>& export_names);
  ~NbdStats();
  NbdStats(const NbdStats&) = delete;
  NbdStats& operator=(const NbdStats&) = delete;

  void Error(ErrorKind kind) { errors_[static_cast<int>(kind)]->Add(); }
  void TlsFailed(TlsFailure reason) { tls_failures_[static_cast<int>(reason)]->Add(); }
  void TlsSucceeded(const TlsOutcome& outcome);
  // A connection of `identity` reached transmission.
  void NoteIdentity(const std::string& identity);

  static constexpr size_t kMaxIdentityStats = 256;
  ExportStats* export_stats(size_t index) { return &exports_[index]; }

  stats::Counter* connections_accepted = nullptr;
  stats::Counter* connections_refused = nullptr;
  stats::Gauge* connections_active = nullptr;
  stats::Counter* handshakes_completed = nullptr;
  stats::Counter* requests_inline = nullptr;    // run on the connection's thread
  stats::Counter* requests_may_wait = nullptr;  // submitted: Volume::MayWait said so
  stats::Counter* tls_handshakes = nullptr;     // TLS handshakes that succeeded
  stats::Counter* starttls_plaintext_dropped_bytes = nullptr;
  PollCounters poll;                            // adaptive_poll.h

 private:
  stats::Registry* const registry_;
  std::vector<std::string> modules_;
  std::array<stats::Counter*, static_cast<int>(ErrorKind::kCount)> errors_{};
  std::array<stats::Counter*, static_cast<int>(TlsFailure::kCount)> tls_failures_{};
  // The labelled counters, made on first use.
  stats::Counter* Labelled(const std::string& module, const std::string& name)
      ARC_REQUIRES(labels_mu_);
  Mutex labels_mu_;
  std::map<std::string, stats::Counter*> labelled_ ARC_GUARDED_BY(labels_mu_);
  size_t identities_ ARC_GUARDED_BY(labels_mu_) = 0;
  std::vector<ExportStats> exports_;
};

}  // namespace arcstore::nbd
