#include "volume/prefetcher.h"

#include <algorithm>
#include <utility>

namespace arcstore::volume {

Prefetcher::Prefetcher(uint64_t records, const PrefetcherOptions& options, ReadAhead read_ahead)
    : records_(records), options_(options), read_ahead_(std::move(read_ahead)) {}

bool Prefetcher::Advance(uint64_t record, uint64_t* from, uint64_t* to) {
  MutexLock l(&mu_);
  if (record != last_) {
    run_ = record == last_ + 1 ? run_ + 1 : 0;
    last_ = record;
  }
  if (run_ < options_.trigger_records) return false;
  *from = std::max(record + 1, issued_);
  *to = std::min(records_, record + 1 + options_.ahead_records);
  if (*from >= *to) return false;
  issued_ = *to;
  return true;
}

void Prefetcher::NoteDemandRead(uint64_t record) {
  uint64_t from = 0, to = 0;
  if (!Advance(record, &from, &to)) return;
  for (uint64_t r = from; r < to; r++) read_ahead_(r);
}

}  // namespace arcstore::volume
