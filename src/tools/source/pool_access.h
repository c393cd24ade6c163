// What the tools need from a Pool beyond include/arcstore/pool.h today: the
// txg history. This file is the one place tools reach
// past the public API, so that when Pool grows TxgHistory() the change is
// here alone.
//
//   TxgHistoryOf(pool)  the txg manager's history, as TxgRows
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

}  // namespace arcstore::tools
