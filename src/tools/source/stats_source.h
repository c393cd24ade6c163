// StatsSource: where the observability tools (stat, summary, iostat, txgs,
// trace, doctor --pool/--live) read a pool's numbers from.
//
//   tool --> StatsSource --+--> PoolStatsSource:   a Pool in this process
//                          |                       (its registry, txg history,
//                          |                        info, trace start/stop)
//                          +--> RemoteStatsSource: a running `arcstore serve`,
//                                                  through its control socket
//                                                  (control.h), without
//                                                  stopping it
//
// OpenStatsSource(POOL) picks the right one: the control socket next to the
// pool (POOL.ctl, or the one given) when a server answers there, else the
// pool opened in-process, read-only.
//
// Txg history rows are TxgRow, the `txgs` kstat's columns plus arcstore's
// (sync reason and throttle times), in a form that crosses the socket.
//
// Thread-safety: a StatsSource is used by one thread at a time, except
// PoolStatsSource, which is thread-safe (the control server calls it from
// its thread while the pool serves).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "arcstore/pool.h"
#include "base/clock.h"
#include "base/result.h"
#include "stats/registry.h"

namespace arcstore::tools {

struct TxgRow {
  uint64_t txg = 0;
  uint64_t birth_ns = 0;
  std::string state;  // as the txgs kstat: O(pen) Q(uiescing) S(yncing) C(ommitted) F(ailed)
  uint64_t ndirty_bytes = 0, nread_bytes = 0, nwritten_bytes = 0;
  uint64_t reads = 0, writes = 0;
  uint64_t otime_ns = 0, qtime_ns = 0, wtime_ns = 0, stime_ns = 0;
  std::string reason;  // timeout, dirty_threshold, arc_dirty_limit, ... or "-"
  uint64_t delay_ns = 0, delayed_writes = 0, blocked_ns = 0, arc_limit_wait_ns = 0;
};

nlohmann::json TxgRowsToJson(const std::vector<TxgRow>& rows);
Result<std::vector<TxgRow>> TxgRowsFromJson(const nlohmann::json& j);

// Pool::Info as it crosses the socket (the `info` request); FromJson checks
// every field and bounds the volume count.
nlohmann::json PoolInfoToJson(const PoolInfo& info);
Result<PoolInfo> PoolInfoFromJson(const nlohmann::json& j);

class StatsSource {
 public:
  virtual ~StatsSource() = default;
  virtual Result<stats::Snapshot> TakeSnapshot() = 0;
  virtual Result<std::vector<TxgRow>> TxgHistory() = 0;
  // The pool's per-I/O trace to `path` (format: docs/observability.md), a
  // path already resolved (format::ResolveOutputPath); Pool::StartTrace
  // says which files it may write.
  virtual Status StartTrace(const std::string& path, uint64_t ring_entries,
                            bool replace_existing) = 0;
  virtual Status StopTrace() = 0;
  // The pool, its space and its volumes (Pool::Info).
  virtual Result<PoolInfo> Info() = 0;
  // Pool::AddCache / RemoveCache; `path` absolute.
  virtual Status AddCache(const std::string& path) = 0;
  virtual Status RemoveCache(const std::string& path) = 0;
  // "pool p0 (in-process)", "arcstore serve on p0.ctl".
  virtual std::string Describe() const = 0;
};

// A Pool in this process. The pool must outlive the source.
class PoolStatsSource final : public StatsSource {
 public:
  PoolStatsSource(Pool* pool, std::string name, Clock* clock = DefaultClock())
      : pool_(pool), name_(std::move(name)), clock_(clock) {}
  Result<stats::Snapshot> TakeSnapshot() override;
  Result<std::vector<TxgRow>> TxgHistory() override;
  Status StartTrace(const std::string& path, uint64_t ring_entries,
                    bool replace_existing) override;
  Status StopTrace() override;
  Result<PoolInfo> Info() override { return pool_->Info(); }
  Status AddCache(const std::string& path) override { return pool_->AddCache(path); }
  Status RemoveCache(const std::string& path) override { return pool_->RemoveCache(path); }
  std::string Describe() const override { return "pool " + name_ + " (in-process)"; }

 private:
  Pool* const pool_;
  const std::string name_;
  Clock* const clock_;
};

// A running server's control socket.
class RemoteStatsSource final : public StatsSource {
 public:
  explicit RemoteStatsSource(std::string socket_path, uint32_t timeout_ms = 10000)
      : socket_path_(std::move(socket_path)), timeout_ms_(timeout_ms) {}
  Result<stats::Snapshot> TakeSnapshot() override;
  Result<std::vector<TxgRow>> TxgHistory() override;
  Status StartTrace(const std::string& path, uint64_t ring_entries,
                    bool replace_existing) override;
  Status StopTrace() override;
  Result<PoolInfo> Info() override;
  Status AddCache(const std::string& path) override;
  Status RemoveCache(const std::string& path) override;
  std::string Describe() const override { return "arcstore serve on " + socket_path_; }

 private:
  const std::string socket_path_;
  const uint32_t timeout_ms_;
};

// The control socket a server of `pool_path` listens on by default.
std::string DefaultControlPath(const std::string& pool_path);

struct OpenedSource {
  std::unique_ptr<Pool> pool;  // set when the pool was opened in-process
  std::unique_ptr<StatsSource> source;
  bool live = false;           // a running server answered
};

struct SourceOptions {
  std::string pool_path;     // may be empty with require_live and a control path
  std::string control_path;  // empty: DefaultControlPath(pool_path)
  bool require_live = false; // fail instead of opening the pool in-process
  bool read_only = true;     // how the pool is opened in-process

  Status Validate() const;
};

Result<OpenedSource> OpenStatsSource(const SourceOptions& options);

}  // namespace arcstore::tools
