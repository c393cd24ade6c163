// What the tools need from a Pool beyond include/arcstore/pool.h today: the
// txg history and the per-I/O trace. This file is the one place tools reach
// past the public API, so that when Pool grows TxgHistory() the change is
// here alone.
//
//   TxgHistoryOf(pool)  the txg manager's history, as TxgRows
//   StartTraceOn(pool)  Pool::StartTrace(path, ring_entries) when the pool
//   StopTraceOn(pool)   has it (the I/O engineer adds it), else NotSupported
//
// Thread-safety: as the pool's methods (thread-safe).
#pragma once

#include <string>
#include <vector>

#include "arcstore/pool.h"
#include "base/result.h"
#include "tools/source/stats_source.h"

namespace arcstore::tools {

Result<std::vector<TxgRow>> TxgHistoryOf(Pool& pool);

namespace internal {
template <typename P>
Status StartTrace(P& pool, const std::string& path, uint64_t ring_entries) {
  if constexpr (requires(P& p) { p.StartTrace(path, ring_entries); }) {
    return pool.StartTrace(path, ring_entries);
  } else {
    return Status::NotSupported("this build's pool has no per-I/O trace (Pool::StartTrace)");
  }
}
template <typename P>
Status StopTrace(P& pool) {
  if constexpr (requires(P& p) { p.StopTrace(); }) {
    return pool.StopTrace();
  } else {
    return Status::NotSupported("this build's pool has no per-I/O trace (Pool::StopTrace)");
  }
}
}  // namespace internal

inline Status StartTraceOn(Pool& pool, const std::string& path, uint64_t ring_entries) {
  return internal::StartTrace(pool, path, ring_entries);
}
inline Status StopTraceOn(Pool& pool) { return internal::StopTrace(pool); }

}  // namespace arcstore::tools
