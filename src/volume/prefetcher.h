// Prefetcher: the sequential-stream detector of one volume (ZFS's zfetch,
// reduced to one stream).
//
// The volume tells it of every demand read of a committed record. After
// `trigger_records` records read in a row (each the one after the last), it
// asks for the next `ahead_records` records to be read ahead, through the
// ReadAhead callback it was given, never asking twice for a record of the
// same stream; a read of any other record (but the last one again) starts a
// new stream. It decides what to read; the callback reads (the volume queues
// a prefetch read of the record on the pool's work queue, unless the ARC
// already holds it).
//
// Thread-safety: NoteDemandRead may be called from any thread; the stream
// state has its own lock, which is not held while ReadAhead runs. ReadAhead
// is owned by the prefetcher and must outlive nothing it captures.
#pragma once

#include <cstdint>
#include <functional>

#include "base/thread_annotations.h"

namespace arcstore::volume {

struct PrefetcherOptions {
  uint64_t trigger_records = 2;  // records read in a row before prefetching
  uint64_t ahead_records = 8;    // how far ahead of the last demand read
};

class Prefetcher {
 public:
  // Called once per record to read ahead, in record order.
  using ReadAhead = std::function<void(uint64_t record)>;

  // A volume of `records` records: nothing at or past it is read ahead.
  Prefetcher(uint64_t records, const PrefetcherOptions& options, ReadAhead read_ahead);
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // A demand read of committed record `record`: may call ReadAhead for the
  // records after it (on this thread, without the lock).
  void NoteDemandRead(uint64_t record) ARC_EXCLUDES(mu_);

 private:
  // The records to read ahead after a demand read of `record`: [*from, *to).
  // False when there are none.
  bool Advance(uint64_t record, uint64_t* from, uint64_t* to) ARC_EXCLUDES(mu_);

  const uint64_t records_;
  const PrefetcherOptions options_;
  const ReadAhead read_ahead_;

  Mutex mu_;
  uint64_t last_ ARC_GUARDED_BY(mu_) = UINT64_MAX;  // the last demand record
  uint64_t run_ ARC_GUARDED_BY(mu_) = 0;            // records in a row before it
  uint64_t issued_ ARC_GUARDED_BY(mu_) = 0;         // read ahead up to here (excl.)
};

}  // namespace arcstore::volume
