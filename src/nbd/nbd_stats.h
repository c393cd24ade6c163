// The NBD server's stats, declared once in a stats::Registry.
//
// Module "nbd" holds the server-wide stats: requests run inline or sent to
// the engine on the volume's "may wait", connections (accepted, refused,
// active), handshakes, and protocol errors by kind. Each export has a module
// "nbd_export.<name>" with, per command, ops, bytes, errors and a latency
// histogram (request read to reply sent), plus its open connections.
//
// Thread-safety: the stat pointers are updated lock-free from any thread.
// The registry must outlive the NbdStats; ~NbdStats removes its modules.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "nbd/adaptive_poll.h"
#include "nbd/protocol.h"
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
  ExportStats* export_stats(size_t index) { return &exports_[index]; }

  stats::Counter* connections_accepted = nullptr;
  stats::Counter* connections_refused = nullptr;
  stats::Gauge* connections_active = nullptr;
  stats::Counter* handshakes_completed = nullptr;
  stats::Counter* requests_inline = nullptr;    // run on the connection's thread
  stats::Counter* requests_may_wait = nullptr;  // submitted: Volume::MayWait said so
  stats::Counter* commits_ahead = nullptr;      // log commits started before a FLUSH came
  PollCounters poll;                            // adaptive_poll.h

 private:
  stats::Registry* const registry_;
  std::vector<std::string> modules_;
  std::array<stats::Counter*, static_cast<int>(ErrorKind::kCount)> errors_{};
  std::vector<ExportStats> exports_;
};

}  // namespace arcstore::nbd
