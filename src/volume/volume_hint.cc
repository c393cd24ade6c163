// VolumeImpl::MayWait: the hint a caller with a thread of its own (the NBD
// server's connection thread) asks before running an operation there
// rather than submitting it to the pool's work queue.
//
// An operation "may wait" when it might block on something other than
// memory copies and short locks:
//
//   read   a record whose newest version is not all in memory: no dirty
//          copy holds the bytes, and the committed record is not in the
//          ARC (absent, a ghost, or being read). Holes that were never
//          cached count as "may wait" too: telling them apart would mean
//          walking the block tree, which may read an indirect block.
//   write, trim, write zeroes
//          the txg manager's throttle would delay or block the writer
//          (TxgManager::AssignWouldWait), the ARC is past its SEVERE line
//          (a new dirty buffer waits for eviction), or a partial record
//          needs the committed record first (defer_partial_reads off, no
//          dirty copy and the record not cached).
//   flush  the commit would wait for a txg sync rather than write a log
//          block (IntentLog::CommitWouldSync: the log overflowed, has no
//          arena yet, or is off), or the volume has no log (every flush
//          syncs a txg). Offset and length are not looked at.
//
// Not looked at: the pool's space admission (a writer may wait for txgs to
// free space when the pool is nearly full), a fragmented partial copy that
// a writer completes, the intent log's memory cap. The answer is a hint
// either way: it is read under short locks that are dropped before the
// caller acts on it, so it may be stale at once. A wrong "no" makes the
// caller's thread wait for once, a wrong "may wait" costs a thread handoff;
// the operation itself is the same on either thread, so correctness never
// depends on the answer.
//
// Cost: one lock of the volume (mu_) for the dirty maps, then per record
// not served by a dirty copy one ARC presence check (its shard lock, and the
// policy lock when nothing holds the buffer); for changes one lock of the
// txg manager. Ranges longer than kHintMaxRecords records are answered
// "may wait" without looking.
#include <algorithm>
#include <array>

#include "volume/volume_impl.h"

namespace arcstore::volume {
namespace {
constexpr uint64_t kHintMaxRecords = 64;
}  // namespace

bool VolumeImpl::MayWait(VolumeOp op, uint64_t offset, uint64_t length) {
  // Operations that fail do so at once.
  if (closed_.load(std::memory_order_acquire)) return false;
  if (op == VolumeOp::kFlush) {
    if (env_.read_only) return false;  // nothing to make durable
    return env_.log == nullptr || env_.log->CommitWouldSync();
  }
  if (!CheckRange("hint", offset, length, entry_.size_bytes).ok() || length == 0) return false;
  const uint64_t first = offset / record_bytes_;
  const uint64_t last = (offset + length - 1) / record_bytes_;
  if (last - first >= kHintMaxRecords) return true;
  if (op == VolumeOp::kRead) return ReadMayWait(offset, length, first, last);
  if (env_.read_only) return false;  // refused at once
  return ChangeMayWait(offset, length, first, last);
}

bool VolumeImpl::ReadMayWait(uint64_t offset, uint64_t length, uint64_t first, uint64_t last) {
  // Records whose bytes no dirty copy holds: the committed record is read.
  std::array<uint64_t, kHintMaxRecords> committed;
  size_t n_committed = 0;
  {
    MutexLock l(&mu_);
    for (uint64_t record = first; record <= last; record++) {
      const uint64_t begin = std::max(offset, record * record_bytes_);
      const uint64_t end = std::min(offset + length, (record + 1) * record_bytes_);
      const uint64_t in_record = begin - record * record_bytes_;
      uint64_t txg = 0;
      const Dirty* d = NewestDirty(record, &txg);
      bool served = false;
      if (d != nullptr) {
        served = d->kind != Dirty::Kind::kData || !d->partial ||
                 std::any_of(d->known.begin(), d->known.end(), [&](const auto& r) {
                   return r.first <= in_record && r.second >= in_record + (end - begin);
                 });
        served = served || WholeCopyBefore(record, txg) != nullptr;
      }
      if (!served) committed[n_committed++] = record;
    }
  }
  // The ARC is asked without mu_ held (the volume never calls into the ARC
  // under it).
  for (size_t i = 0; i < n_committed; i++) {
    if (!env_.arc->Cached(KeyOf(committed[i]))) return true;
  }
  return false;
}

bool VolumeImpl::ChangeMayWait(uint64_t offset, uint64_t length, uint64_t first, uint64_t last) {
  if (env_.arc->Overflow() == arc::OverflowLevel::kSevere) return true;
  if (env_.txg->AssignWouldWait((last - first + 1) * record_bytes_)) return true;
  if (env_.defer_partial_reads) return false;  // partial records make partial copies
  // Without deferral a partial record with no dirty copy is read first.
  for (uint64_t record : {first, last}) {
    const uint64_t record_end = std::min<uint64_t>((record + 1) * record_bytes_, entry_.size_bytes);
    const bool whole = offset <= record * record_bytes_ && offset + length >= record_end;
    if (whole) continue;
    bool dirty = false;
    {
      MutexLock l(&mu_);
      dirty = NewestDirty(record) != nullptr;
    }
    if (!dirty && !env_.arc->Cached(KeyOf(record))) return true;
  }
  return false;
}

// The caller's thread also writes the intent log's early batches its
// changes make due, before it waits for its client (Volume::SetCallerThread).
void VolumeImpl::SetCallerThread(bool on) {
  if (env_.log == nullptr || env_.read_only) return;
  if (on) {
    env_.log->RegisterEarlyCaller();
  } else {
    env_.log->UnregisterEarlyCaller();
  }
}

void VolumeImpl::BeforeCallerWaits() {
  if (env_.log == nullptr || env_.read_only || closed_.load(std::memory_order_acquire)) return;
  env_.log->WriteEarly();
}

}  // namespace arcstore::volume
