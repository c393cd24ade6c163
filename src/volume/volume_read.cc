#include "volume/volume_impl.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace arcstore::volume {

using format::BlockPointer;
using format::BlockType;

Result<arc::ArcHold> VolumeImpl::HoldCommitted(uint64_t record, arc::AccessKind access) {
  HandleCache* handles = access == arc::AccessKind::kDemand ? env_.handles : nullptr;
  uint64_t generation = 0;
  if (handles != nullptr) {
    if (arc::ArcHold h = handles->Lookup(KeyOf(record))) return h;
    generation = handles->Generation(entry_.guid);  // before the tree is read
  }
  const uint64_t commits_seen = commits_.load();  // before the tree is read, too
  const TreeReadHook* hook = nullptr;
  if (has_tree_read_hook_.load(std::memory_order_acquire)) {
    MutexLock l(&mu_);
    if (tree_read_hook_) hook = &tree_read_hook_;
  }
  if (hook != nullptr) (*hook)(record, TreeReadPoint::kBeforeTreeRead);
  ARC_ASSIGN_OR_RETURN(BlockPointer bp, tree_.Get(record));
  if (bp.IsHole()) return arc::ArcHold();
  if (bp.birth_txg >= unsettled_txg_.load(std::memory_order_acquire)) {
    // A read racing its record's sync gets here: a partial copy's base
    // read, or a read that found no copy before a writer made one and its
    // txg began to sync. The callers look again and find the syncing txg's
    // whole copy (Cache skips the record).
    return Status::Busy("record " + std::to_string(record) + " is being written by txg " +
                               std::to_string(bp.birth_txg));
  }
  if (bp.logical_bytes != record_bytes_) {
    return Status::Corruption("record " + std::to_string(record) + " is " +
                              std::to_string(bp.logical_bytes) + " bytes, expected " +
                              std::to_string(record_bytes_) + " (" + bp.ToString() + ")");
  }
  if (hook != nullptr) (*hook)(record, TreeReadPoint::kBeforeLookup);
  arc::LookupResult r = env_.arc->Lookup(
      KeyOf(record), arc::LookupOptions{record_bytes_, arc::BufKind::kData,
                                        arc::HolderKind::kApiUser, access});
  if (!r.hit()) {
    // A miss: this caller reads (concurrent lookups wait for it: iohits).
    stats_->record_reads->Add();
    ARC_RETURN_IF_ERROR(access == arc::AccessKind::kPrefetch
                            ? env_.blocks->PrefetchBlockInto(bp, r.fill.buffer())
                            : env_.blocks->ReadBlockInto(bp, r.fill.buffer()));
    r.fill.set_origin(arc::ArcOrigin{bp.Place(), bp.birth_txg});
    bool cached = false;
    r.hold = FinishRecordRead(record, bp, commits_seen, std::move(r.fill), &cached);
    if (!cached) return std::move(r.hold);  // nor in the handle cache
  }
  if (handles != nullptr) handles->Insert(KeyOf(record), r.hold, generation);
  return std::move(r.hold);
}

// The key names the record, not a version of it: a fill of `bp` that
// finished after a txg published a newer version (which may be evicted by
// then, so that the lookup missed) would cache the old bytes for every
// later reader. A fill that overlaps the publication is orphaned by
// Publish; this catches the one whose lookup came after it. TxgCommitted
// publishes after the tree changed and before commits_ moves, and the
// published version stays held by its dirty copy until then (it cannot be
// evicted earlier), so a fill is cached under mu_ only if no commit came
// since a tree read that still gives `bp`.
arc::ArcHold VolumeImpl::FinishRecordRead(uint64_t record, const BlockPointer& bp,
                                          uint64_t commits_seen, arc::FillToken fill,
                                          bool* cached) {
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    {
      MutexLock l(&mu_);
      *cached = commits_ == commits_seen;
      if (*cached) return fill.Finish();
      commits_seen = commits_;
    }
    Result<BlockPointer> now = tree_.Get(record);  // without mu_: it may read
    if (!now.ok() || *now != bp) break;
  }
  stats_->reads_uncached->Add();
  return fill.FinishUncached();
}

Status VolumeImpl::ReadNow(uint64_t offset, std::span<uint8_t> out) {
  ARC_RETURN_IF_ERROR(CheckOpen());
  ARC_RETURN_IF_ERROR(CheckRange("read", offset, out.size(), entry_.size_bytes));
  for (uint64_t pos = 0; pos < out.size();) {
    const uint64_t at = offset + pos;
    const uint64_t record = at / record_bytes_, in_record = at % record_bytes_;
    const uint64_t n = std::min<uint64_t>(record_bytes_ - in_record, out.size() - pos);
    Status s = ReadRecordPart(record, in_record, n, out.data() + pos);
    if (!s.ok()) {
      return s.WithContext("volume " + entry_.name + " offset " + std::to_string(at) +
                           " (record " + std::to_string(record) + ")");
    }
    pos += n;
  }
  return Status::Ok();
}

const VolumeImpl::Dirty* VolumeImpl::CopyFromDirty(uint64_t record, uint64_t in_record,
                                                   uint64_t n, uint8_t* dst, bool* served) {
  *served = false;
  uint64_t txg = 0;
  const Dirty* d = NewestDirty(record, &txg);
  if (d == nullptr) return nullptr;
  *served = CopyKnown(*d, in_record, n, dst);
  if (!*served) {
    if (const Dirty* whole = WholeCopyBefore(record, txg)) {
      // An older whole copy has the bytes this one lacks (one being
      // synced, say, whose block may not be written yet).
      CopyKnown(*whole, in_record, n, dst);
      Overlay(*d, in_record, n, dst);
      *served = true;
    }
  }
  if (*served) stats_->dirty_read_hits->Add();
  return d;
}

Status VolumeImpl::ReadRecordPart(uint64_t record, uint64_t in_record, uint64_t n, uint8_t* dst) {
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    bool partial = false;
    uint64_t commits_seen = 0, changes_seen = 0;
    {
      MutexLock l(&mu_);
      bool served = false;
      if (CopyFromDirty(record, in_record, n, dst, &served) != nullptr) {
        if (served) return Status::Ok();
        partial = true;  // some of the bytes are the committed record's
      }
      commits_seen = commits_;
      changes_seen = tree_changes_;
    }
    if (!partial) NoteSequential(record);
    Result<arc::ArcHold> read = HoldCommitted(record, arc::AccessKind::kDemand);
    if (!read.ok()) {
      // The syncing txg may have replaced the record with a block still
      // being written (the copy overlaid here, or one a writer made after
      // the look above): its copy is still there, so look again.
      MutexLock l(&mu_);
      if (commits_ != commits_seen || tree_changes_ != changes_seen) continue;
    }
    ARC_RETURN_IF_ERROR(read.status());
    const arc::ArcHold& base = *read;
    auto copy_base = [&] {
      if (base) {
        std::memcpy(dst, base.data().data() + in_record, n);
      } else {
        std::memset(dst, 0, n);
      }
    };
    if (!partial) {
      copy_base();
      return Status::Ok();
    }
    MutexLock l(&mu_);
    // A txg committed meanwhile (`base` may be older than the copy's base),
    // or a sync began changing the tree (`base` may be its new block).
    if (commits_ != commits_seen || tree_changes_ != changes_seen) continue;
    // The copies may have changed too, with neither count: the partial copy
    // may have been completed (its sync's CompletePartials, or a writer),
    // and a newer txg may have made a partial copy over it that knows only
    // its own bytes. Its other bytes are then that whole copy's, not the
    // committed record's: look again as above.
    bool served = false;
    const Dirty* d = CopyFromDirty(record, in_record, n, dst, &served);
    if (served) return Status::Ok();
    if (d == nullptr) continue;
    // No older whole copy: every byte the newest copy does not know is the
    // committed record's.
    copy_base();
    Overlay(*d, in_record, n, dst);
    stats_->dirty_read_hits->Add();
    return Status::Ok();
  }
  return Status::Internal("record " + std::to_string(record) + " kept changing under a read");
}

bool VolumeImpl::CopyKnown(const Dirty& d, uint64_t in_record, uint64_t n, uint8_t* dst) const {
  if (d.kind != Dirty::Kind::kData) {
    std::memset(dst, 0, n);
    return true;
  }
  if (d.partial) {
    // Known ranges never touch, so one of them must hold all n bytes.
    const bool covered = std::any_of(d.known.begin(), d.known.end(), [&](const auto& r) {
      return r.first <= in_record && r.second >= in_record + n;
    });
    if (!covered) return false;
  }
  std::memcpy(dst, d.buf.data().data() + in_record, n);
  return true;
}

void VolumeImpl::Overlay(const Dirty& d, uint64_t in_record, uint64_t n, uint8_t* dst) const {
  for (const auto& [b, e] : d.known) {
    const uint64_t lo = std::max<uint64_t>(b, in_record);
    const uint64_t hi = std::min<uint64_t>(e, in_record + n);
    if (lo < hi) std::memcpy(dst + (lo - in_record), d.buf.data().data() + lo, hi - lo);
  }
}

Status VolumeImpl::CacheNow(uint64_t offset, uint64_t length) {
  ARC_RETURN_IF_ERROR(CheckOpen());
  ARC_RETURN_IF_ERROR(CheckRange("cache", offset, length, entry_.size_bytes));
  // Every committed record of the range into the ARC, as prefetch reads.
  if (length == 0) return Status::Ok();
  for (uint64_t r = offset / record_bytes_; r <= (offset + length - 1) / record_bytes_; r++) {
    const Status s = HoldCommitted(r, arc::AccessKind::kPrefetch).status();
    // Busy: a txg is writing the record; its newest version is a dirty
    // copy in memory, and becomes the cached one when the txg commits.
    if (!s.ok() && s.code() != StatusCode::kBusy) return s;
  }
  return Status::Ok();
}

Status VolumeImpl::BlockStatusNow(uint64_t offset, uint64_t length, std::vector<Extent>* out) {
  std::vector<Extent>& extents = *out;
  extents.clear();
  Status s = CheckOpen();
  if (s.ok()) s = CheckRange("block status", offset, length, entry_.size_bytes);
  for (uint64_t pos = 0; s.ok() && pos < length;) {
    const uint64_t at = offset + pos;
    const uint64_t record = at / record_bytes_;
    const uint64_t n = std::min<uint64_t>(record_bytes_ - at % record_bytes_, length - pos);
    bool hole = false, zero = false;
    bool known = false;
    {
      MutexLock l(&mu_);
      if (const Dirty* d = NewestDirty(record)) {
        known = true;
        hole = d->kind == Dirty::Kind::kHole;
        zero = d->kind != Dirty::Kind::kData;
      }
    }
    if (!known) {
      Result<BlockPointer> bp = tree_.Get(record);
      if (!bp.ok()) {
        s = bp.status();
        break;
      }
      hole = bp->type == BlockType::kHole;
      zero = bp->IsHole();
    }
    if (!extents.empty() && extents.back().hole == hole && extents.back().zero == zero) {
      extents.back().length += n;
    } else {
      extents.push_back(Extent{at, n, hole, zero});
    }
    pos += n;
  }
  return s;
}

void VolumeImpl::NoteSequential(uint64_t record) {
  if (!env_.prefetch || env_.work == nullptr) return;
  prefetcher_.NoteDemandRead(record);
}

// A record already in the ARC is not queued: its read ahead would be a hit
// that only costs a task on the work queue, ahead of demand requests there
// (a sequential reader of cached data queues one per record it reads).
void VolumeImpl::ReadAhead(uint64_t record) {
  if (env_.arc->Cached(KeyOf(record))) return;
  env_.work->Run([this, record] {
    if (!closed_.load(std::memory_order_acquire)) {
      (void)HoldCommitted(record, arc::AccessKind::kPrefetch);  // a failed prefetch is no error
    }
  });
}

}  // namespace arcstore::volume
