#include "tools/source/pool_access.h"

#include "pool/pool_impl.h"

namespace arcstore::tools {

Result<std::vector<TxgRow>> TxgHistoryOf(Pool& pool) {
  auto* impl = dynamic_cast<pool::PoolImpl*>(&pool);
  if (impl == nullptr) return Status::NotSupported("this pool keeps no txg history");
  std::vector<TxgRow> rows;
  for (const txg::TxgRecord& r : impl->txgs().History()) {
    TxgRow row;
    row.txg = r.txg;
    row.birth_ns = r.birth_ns;
    row.state = std::string(txg::TxgStateName(r.state));
    row.ndirty_bytes = r.ndirty_bytes;
    row.nread_bytes = r.nread_bytes;
    row.nwritten_bytes = r.nwritten_bytes;
    row.reads = r.reads;
    row.writes = r.writes;
    row.otime_ns = r.otime_ns;
    row.qtime_ns = r.qtime_ns;
    row.wtime_ns = r.wtime_ns;
    row.stime_ns = r.stime_ns;
    row.reason = r.reason == txg::SyncReason::kNone ? "-" : std::string(txg::SyncReasonName(r.reason));
    row.delay_ns = r.delay_ns;
    row.delayed_writes = r.delayed_writes;
    row.blocked_ns = r.blocked_ns;
    row.arc_limit_wait_ns = r.arc_limit_wait_ns;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace arcstore::tools
