#include "nbd/nbd_stats.h"

namespace arcstore::nbd {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadMagic: return "bad_magic";
    case ErrorKind::kBadClientFlags: return "bad_client_flags";
    case ErrorKind::kUnknownOption: return "unknown_option";
    case ErrorKind::kInvalidOption: return "invalid_option";
    case ErrorKind::kUnknownExport: return "unknown_export";
    case ErrorKind::kOversizedOption: return "oversized_option";
    case ErrorKind::kTooManyOptions: return "too_many_options";
    case ErrorKind::kUnknownCommand: return "unknown_command";
    case ErrorKind::kBadFlags: return "bad_flags";
    case ErrorKind::kOutOfRange: return "out_of_range";
    case ErrorKind::kOversizedPayload: return "oversized_payload";
    case ErrorKind::kReadOnly: return "read_only";
    case ErrorKind::kNotNegotiated: return "not_negotiated";
    case ErrorKind::kHandshakeDisconnect: return "handshake_disconnect";
    case ErrorKind::kRequestDisconnect: return "request_disconnect";
    case ErrorKind::kHandshakeTimeout: return "handshake_timeout";
    case ErrorKind::kVolumeError: return "volume_error";
    case ErrorKind::kSendFailed: return "send_failed";
    case ErrorKind::kTlsRequired: return "tls_required";
    case ErrorKind::kDeniedVolume: return "denied_volume";
    case ErrorKind::kCount: break;
  }
  return "unknown";
}

NbdStats::NbdStats(stats::Registry* registry, const std::vector<std::string>& export_names)
    : registry_(registry) {
  using stats::Unit;
  modules_.push_back("nbd");
  connections_accepted =
      registry_->AddCounter("nbd", "connections_accepted", Unit::kOps, "connections accepted");
  connections_refused = registry_->AddCounter("nbd", "connections_refused", Unit::kOps,
                                              "connections refused (max_connections reached)");
  connections_active =
      registry_->AddGauge("nbd", "connections_active", Unit::kNone, "connections open now");
  handshakes_completed = registry_->AddCounter("nbd", "handshakes_completed", Unit::kOps,
                                               "handshakes that reached transmission");
  requests_inline =
      registry_->AddCounter("nbd", "requests_inline", Unit::kOps,
                            "requests run on their connection's thread (alone, or the "
                            "volume said they will not wait)");
  requests_may_wait =
      registry_->AddCounter("nbd", "requests_may_wait", Unit::kOps,
                            "requests submitted to the engine because the volume said they may "
                            "wait (a cache miss, a throttled write, a commit that would sync a "
                            "txg)");
  poll.caught = registry_->AddCounter("nbd", "poll_caught", Unit::kOps,
                                     "waits for a request that polling the socket ended");
  poll.slept = registry_->AddCounter("nbd", "poll_slept", Unit::kOps,
                                     "waits for a request that slept (after polling, or "
                                     "with a window of 0)");
  poll.no_budget = registry_->AddCounter("nbd", "poll_no_budget", Unit::kOps,
                                         "waits that slept at once: max_pollers threads "
                                         "were polling");
  poll.poll_ns = registry_->AddCounter("nbd", "poll_ns", Unit::kNanoseconds,
                                       "time connection threads spent polling");
  poll.rests = registry_->AddCounter("nbd", "poll_rests", Unit::kOps,
                                     "times a connection stopped polling for a while: its "
                                     "polling had cost more than a window per request caught");
  tls_handshakes =
      registry_->AddCounter("nbd", "tls_handshakes", Unit::kOps, "TLS handshakes that succeeded");
  starttls_plaintext_dropped_bytes = registry_->AddCounter(
      "nbd", "starttls_plaintext_dropped_bytes", Unit::kBytes,
      "bytes a client sent after NBD_OPT_STARTTLS before its TLS handshake (dropped unread)");
  for (int k = 1; k < static_cast<int>(TlsFailure::kCount); k++) {
    std::string name = std::string("tls_fail_") + TlsFailureName(static_cast<TlsFailure>(k));
    tls_failures_[k] = registry_->AddCounter("nbd", name, Unit::kOps, "failed TLS handshakes");
  }
  tls_failures_[0] = tls_failures_[static_cast<int>(TlsFailure::kOther)];
  modules_.push_back("nbd_tls");
  modules_.push_back("nbd_identity");
  for (int k = 0; k < static_cast<int>(ErrorKind::kCount); k++) {
    std::string name = std::string("err_") + ErrorKindName(static_cast<ErrorKind>(k));
    errors_[k] = registry_->AddCounter("nbd", name, Unit::kOps, "client or protocol errors");
  }
  for (const std::string& export_name : export_names) {
    std::string module = "nbd_export." + export_name;
    modules_.push_back(module);
    ExportStats es;
    es.connections = registry_->AddGauge(module, "connections", Unit::kNone,
                                         "connections using this export now");
    for (int c = 0; c < kNumCommands; c++) {
      if (c == kCmdDisc) continue;
      std::string cmd = CommandName(static_cast<uint16_t>(c));
      CommandStats& cs = es.commands[c];
      cs.ops = registry_->AddCounter(module, cmd + "_ops", Unit::kOps, "requests completed");
      cs.bytes = registry_->AddCounter(module, cmd + "_bytes", Unit::kBytes,
                                       "bytes covered by completed requests");
      cs.errors = registry_->AddCounter(module, cmd + "_errors", Unit::kOps,
                                        "requests answered with an error");
      cs.latency_ns = registry_->AddHistogram(module, cmd + "_latency_ns", Unit::kNanoseconds,
                                              "request received to reply sent");
    }
    exports_.push_back(es);
  }
}

namespace {

// A stat name from free text: [A-Za-z0-9_] kept, anything else '_'.
std::string StatName(const std::string& prefix, const std::string& text) {
  std::string out = prefix;
  for (char c : text.substr(0, 128)) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += keep ? c : '_';
  }
  return out;
}

}  // namespace

stats::Counter* NbdStats::Labelled(const std::string& module, const std::string& name) {
  const std::string key = module + "." + name;
  auto it = labelled_.find(key);
  if (it != labelled_.end()) return it->second;
  stats::Counter* c = registry_->AddCounter(module, name, stats::Unit::kOps,
                                            module == "nbd_tls" ? "TLS sessions"
                                                                : "connections by identity");
  labelled_.emplace(key, c);
  return c;
}

void NbdStats::TlsSucceeded(const TlsOutcome& outcome) {
  tls_handshakes->Add();
  MutexLock l(&labels_mu_);
  Labelled("nbd_tls", StatName("version_", outcome.version))->Add();
  Labelled("nbd_tls", StatName("cipher_", outcome.cipher))->Add();
  Labelled("nbd_tls", StatName("ktls_", outcome.ktls))->Add();
}

void NbdStats::NoteIdentity(const std::string& identity) {
  MutexLock l(&labels_mu_);
  std::string name = StatName("", identity);
  if (labelled_.count("nbd_identity." + name) == 0) {
    if (identities_ >= kMaxIdentityStats) name = "other";
    else identities_++;
  }
  Labelled("nbd_identity", name)->Add();
}

NbdStats::~NbdStats() {
  for (const std::string& m : modules_) registry_->RemoveModule(m);
}

}  // namespace arcstore::nbd
