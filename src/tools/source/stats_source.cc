#include "tools/source/stats_source.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "stats/wire.h"
#include "tools/source/control.h"
#include "tools/source/pool_access.h"
#include "tools/source/socket_server.h"

namespace arcstore::tools {

namespace {

constexpr size_t kMaxTxgRows = 100000;

// The numeric columns of a TxgRow, by JSON name.
struct U64Field {
  const char* name;
  uint64_t TxgRow::*field;
};
constexpr U64Field kU64Fields[] = {
    {"txg", &TxgRow::txg},
    {"birth_ns", &TxgRow::birth_ns},
    {"ndirty_bytes", &TxgRow::ndirty_bytes},
    {"nread_bytes", &TxgRow::nread_bytes},
    {"nwritten_bytes", &TxgRow::nwritten_bytes},
    {"reads", &TxgRow::reads},
    {"writes", &TxgRow::writes},
    {"otime_ns", &TxgRow::otime_ns},
    {"qtime_ns", &TxgRow::qtime_ns},
    {"wtime_ns", &TxgRow::wtime_ns},
    {"stime_ns", &TxgRow::stime_ns},
    {"delay_ns", &TxgRow::delay_ns},
    {"delayed_writes", &TxgRow::delayed_writes},
    {"blocked_ns", &TxgRow::blocked_ns},
    {"arc_limit_wait_ns", &TxgRow::arc_limit_wait_ns},
};

}  // namespace

nlohmann::json TxgRowsToJson(const std::vector<TxgRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const TxgRow& r : rows) {
    nlohmann::json j;
    for (const U64Field& f : kU64Fields) j[f.name] = r.*(f.field);
    j["state"] = r.state;
    j["reason"] = r.reason;
    out.push_back(std::move(j));
  }
  return out;
}

Result<std::vector<TxgRow>> TxgRowsFromJson(const nlohmann::json& j) {
  if (!j.is_array()) return Status::InvalidArgument("txg history: not a JSON array");
  if (j.size() > kMaxTxgRows) return Status::InvalidArgument("txg history: more than 100000 rows");
  std::vector<TxgRow> rows;
  for (size_t i = 0; i < j.size(); i++) {
    const nlohmann::json& row = j[i];
    auto bad = [&](const std::string& what) {
      return Status::InvalidArgument("txg history: row " + std::to_string(i) + ": " + what);
    };
    if (!row.is_object()) return bad("not an object");
    TxgRow r;
    for (const U64Field& f : kU64Fields) {
      auto it = row.find(f.name);
      if (it == row.end() || !it->is_number_unsigned()) {
        return bad(std::string(f.name) + " is not an unsigned integer");
      }
      r.*(f.field) = it->get<uint64_t>();
    }
    auto state = row.find("state");
    auto reason = row.find("reason");
    if (state == row.end() || !state->is_string() || reason == row.end() || !reason->is_string()) {
      return bad("state and reason must be strings");
    }
    r.state = state->get<std::string>();
    r.reason = reason->get<std::string>();
    rows.push_back(std::move(r));
  }
  return rows;
}

Result<stats::Snapshot> PoolStatsSource::TakeSnapshot() {
  return pool_->stats().TakeSnapshot(clock_->NowNs());
}

Result<std::vector<TxgRow>> PoolStatsSource::TxgHistory() { return TxgHistoryOf(*pool_); }

Status PoolStatsSource::StartTrace(const std::string& path, uint64_t ring_entries,
                                   bool replace_existing) {
  return pool_->StartTrace(path, ring_entries, replace_existing);
}

Status PoolStatsSource::StopTrace() { return pool_->StopTrace(); }

Result<stats::Snapshot> RemoteStatsSource::TakeSnapshot() {
  ARC_ASSIGN_OR_RETURN(std::string body, ControlCall(socket_path_, "stats", timeout_ms_));
  return stats::FromWireJson(body);
}

Result<std::vector<TxgRow>> RemoteStatsSource::TxgHistory() {
  ARC_ASSIGN_OR_RETURN(std::string body, ControlCall(socket_path_, "txgs", timeout_ms_));
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Corruption(socket_path_ + ": txg history is not JSON");
  return TxgRowsFromJson(j);
}

Status RemoteStatsSource::StartTrace(const std::string& path, uint64_t ring_entries,
                                     bool replace_existing) {
  return ControlCall(socket_path_, TraceStartRequest(path, ring_entries, replace_existing),
                     timeout_ms_)
      .status();
}

Result<PoolInfo> RemoteStatsSource::Info() {
  ARC_ASSIGN_OR_RETURN(std::string body, ControlCall(socket_path_, "info", timeout_ms_));
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Corruption(socket_path_ + ": pool info is not JSON");
  return PoolInfoFromJson(j);
}

Status RemoteStatsSource::StopTrace() {
  return ControlCall(socket_path_, "trace stop", timeout_ms_).status();
}

Status RemoteStatsSource::AddCache(const std::string& path) {
  return ControlCall(socket_path_, "cache add " + path, timeout_ms_).status();
}

Status RemoteStatsSource::RemoveCache(const std::string& path) {
  return ControlCall(socket_path_, "cache remove " + path, timeout_ms_).status();
}

std::string DefaultControlPath(const std::string& pool_path) { return pool_path + ".ctl"; }

Status SourceOptions::Validate() const {
  if (pool_path.empty() && (control_path.empty() || !require_live)) {
    return Status::InvalidArgument("give a pool (or --live with --control PATH)");
  }
  return Status::Ok();
}

Result<OpenedSource> OpenStatsSource(const SourceOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  std::string control =
      options.control_path.empty() ? DefaultControlPath(options.pool_path) : options.control_path;
  OpenedSource out;
  Result<int> probe = ConnectUnix(control);
  if (probe.ok()) {
    ::close(*probe);
    out.source = std::make_unique<RemoteStatsSource>(control);
    out.live = true;
    return out;
  }
  if (options.require_live) {
    return Status::NotFound("no arcstore serve answers on " + control + " (" +
                            probe.status().message() + "); start one with serve --control " +
                            control);
  }
  PoolOptions po;
  po.read_only = options.read_only;
  Result<std::unique_ptr<Pool>> pool = Pool::Open(options.pool_path, po);
  if (!pool.ok()) {
    return Status(pool.status().code(), "cannot open pool " + options.pool_path + " (and no server on " +
                                            control + "): " + pool.status().message());
  }
  out.pool = std::move(*pool);
  out.source = std::make_unique<PoolStatsSource>(out.pool.get(), options.pool_path);
  return out;
}

}  // namespace arcstore::tools
