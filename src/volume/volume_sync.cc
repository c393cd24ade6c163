#include "volume/volume_impl.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "base/check.h"

namespace arcstore::volume {

using format::BlockPointer;
using format::BlockType;

namespace {
constexpr size_t kBaseReaders = 8;  // parallel reads completing a txg's partial copies

bool AllZero(std::span<const uint8_t> b) {
  return b.empty() || (b[0] == 0 && std::memcmp(b.data(), b.data() + 1, b.size() - 1) == 0);
}
}  // namespace

void VolumeImpl::FillUnknown(Dirty& d, const uint8_t* base) const {
  uint8_t* buf = d.buf.mutable_data().data();
  auto fill = [&](uint64_t from, uint64_t to) {
    if (from >= to) return;
    if (base != nullptr) {
      std::memcpy(buf + from, base + from, to - from);
    } else {
      std::memset(buf + from, 0, to - from);
    }
  };
  uint64_t at = 0;
  for (const auto& [b, e] : d.known) {
    fill(at, b);
    at = e;
  }
  fill(at, record_bytes_);
}

void VolumeImpl::MarkWhole(Dirty& d) {
  d.partial = false;
  d.known.clear();
  d.base.Reset();
}

void VolumeImpl::Complete(Dirty& d, const uint8_t* base) const {
  if (!d.partial) return;
  FillUnknown(d, base);
  MarkWhole(d);
}

Status VolumeImpl::CompletePartials(const std::vector<std::pair<uint64_t, Dirty*>>& all) {
  // The records under the partial copies, read in parallel (each is a
  // demand read: this sync waits for them). A copy whose committed record
  // is held (GiveBases) or still cached needs no read and is completed on
  // this thread alone: more threads would only copy memory. (A cached
  // record evicted before its turn is read here, on this thread: slower,
  // never wrong.) Every byte a copy does not know is the committed
  // record's: no txg between the copy and now changed it (that txg's copy
  // would be older and known it).
  //
  // Each copy is completed in its own buffer, without mu_: the txg is
  // quiesced, so nothing but this sync writes its copies, and readers and
  // the next txg's writers take only the bytes a partial copy knows
  // (CopyKnown, Overlay, CopyToNewer), which these threads never write.
  // Only the flag that makes the whole buffer readable is set under mu_,
  // in O(1), so a completing thread preempted by the scheduler (they run
  // at the sync thread's nice value, --sync-nice) never holds the
  // volume's writers; and a completion takes no memory of its own, which
  // matters while the ARC is still growing.
  std::function<void(uint64_t)> hook;
  std::vector<std::pair<uint64_t, Dirty*>> in_memory, unheld, to_read;
  {
    MutexLock l(&mu_);
    hook = complete_hook_;
    for (const auto& p : all) (p.second->base ? in_memory : unheld).push_back(p);
  }
  for (const auto& p : unheld) {
    (env_.arc->Cached(KeyOf(p.first)) ? in_memory : to_read).push_back(p);
  }
  for (const auto& [record, d] : in_memory) ARC_RETURN_IF_ERROR(CompletePartial(record, d, hook));
  std::atomic<size_t> next{0};
  Mutex error_mu;
  Status error;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < to_read.size();) {
      const auto& [record, d] = to_read[i];
      Status s = CompletePartial(record, d, hook);
      if (!s.ok()) {
        MutexLock l(&error_mu);
        if (error.ok()) error = std::move(s);
        return;
      }
    }
  };
  std::vector<std::thread> readers;
  for (size_t i = 1; i < std::min(kBaseReaders, to_read.size()); i++) readers.emplace_back(work);
  work();
  for (auto& t : readers) t.join();
  MutexLock l(&error_mu);
  return error;
}

Status VolumeImpl::CompletePartial(uint64_t record, Dirty* d,
                                   const std::function<void(uint64_t)>& hook) {
  arc::ArcHold base;
  {
    MutexLock l(&mu_);
    // Only this sync completes the quiesced txg's copies (see
    // CompletePartials), so every copy listed is still partial; a whole one
    // must not be filled from the committed record, which would lose its
    // bytes.
    if (!d->partial) return Status::Ok();
    // The committed record, held since its txg committed: no read.
    if (d->base) base = d->base.Clone(arc::HolderKind::kDirtyRecord);
  }
  const bool held = static_cast<bool>(base);
  if (!held) {
    Result<arc::ArcHold> read = HoldCommitted(record, arc::AccessKind::kDemand);
    if (!read.ok()) {
      return read.status().WithContext("volume " + entry_.name + ": completing record " +
                                        std::to_string(record));
    }
    base = std::move(*read);  // empty: a hole, zeros
  }
  FillUnknown(*d, BytesOf(base));
  stats_->rmw_reads->Add();
  if (held) stats_->rmw_held_bases->Add();
  if (hook) hook(record);
  MutexLock l(&mu_);
  MarkWhole(*d);
  return Status::Ok();
}

Status VolumeImpl::SyncTxg(uint64_t txg, RecordSink* sink, format::VolumeEntry* entry) {
  std::vector<std::pair<uint64_t, Dirty*>> records, partials;
  DirtyMap* mine = nullptr;
  {
    MutexLock l(&mu_);
    auto it = dirty_.find(txg);
    if (it != dirty_.end()) mine = &it->second;
  }
  // Quiesced: no writer adds to or removes from the txg's map any more, so
  // it is walked without mu_ (a walk under it would stop every writer and
  // reader of the volume for a time that grows with the txg).
  if (mine != nullptr) {
    records.reserve(mine->size());
    for (auto& [record, d] : *mine) {
      records.emplace_back(record, &d);
      if (d.partial) partials.emplace_back(record, &d);
    }
  }
  // The txg is quiesced: its copies no longer change (but for completing
  // the partial ones, under mu_, before anything reads them here), and stay
  // in the map until TxgCommitted, so the pointers are stable without the
  // lock.
  ARC_RETURN_IF_ERROR(CompletePartials(partials));
  {
    // From here the tree changes under readers; each record of this txg has
    // a whole copy they can use instead.
    MutexLock l(&mu_);
    tree_changes_++;
    unsettled_txg_.store(txg, std::memory_order_release);
  }
  std::sort(records.begin(), records.end());
  for (const auto& [record, d] : records) {
    BlockPointer bp;
    bp.level = 0;
    bp.birth_txg = txg;
    if (d->kind == Dirty::Kind::kHole) {
      bp.type = BlockType::kHole;
    } else if (d->kind == Dirty::Kind::kZero ||
               (d->zeroed_as == Dirty::Kind::kZero && AllZero(d->buf.data()))) {
      bp.type = BlockType::kZero;
      bp.logical_bytes = record_bytes_;
    } else if (d->zeroed_as == Dirty::Kind::kHole && AllZero(d->buf.data())) {
      // Trims that covered the record in parts (a filesystem's discards
      // split at its own block groups, not at records) free it as one
      // whole-record trim would.
      bp.type = BlockType::kHole;
    } else {
      bp.type = BlockType::kData;
      bp.compression = entry_.compression;
      bp.fill = 1;
      ARC_ASSIGN_OR_RETURN(bp, sink->WriteRecord(bp, d->buf.data(), record_bytes_));
      d->stored = arc::ArcOrigin{bp.Place(), bp.birth_txg};
    }
    ARC_ASSIGN_OR_RETURN(BlockPointer old, tree_.Set(record, bp));
    ARC_RETURN_IF_ERROR(sink->FreeBlock(old));
  }
  ARC_ASSIGN_OR_RETURN(BlockPointer root, tree_.Sync(txg, sink));
  entry_.root = root;
  *entry = entry_;
  return Status::Ok();
}

void VolumeImpl::TxgCommitted(uint64_t txg) {
  // The copies of committed txgs no longer change and nothing but this
  // thread takes or lets go of their holds: each written record becomes the
  // cached version of its key in place, without mu_, while readers may
  // still copy its bytes from the dirty copy (either way they read the
  // same bytes). Publishing under mu_ would block every writer and reader
  // of the volume for a time that grows with the txg.
  std::vector<DirtyMap*> committed;
  std::function<void(uint64_t)> hook;
  {
    MutexLock l(&mu_);
    for (auto it = dirty_.begin(); it != dirty_.end() && it->first <= txg; ++it) {
      committed.push_back(&it->second);
    }
    hook = publish_hook_;
  }
  // A destroyed volume's copies are not cached.
  if (closed_.load(std::memory_order_acquire)) committed.clear();
  for (const DirtyMap* records : committed) {
    for (const auto& [record, d] : *records) {
      ARC_CHECK(!d.partial);  // completed by SyncTxg
      // Before the copy goes: a reader inserting an older version it read
      // before now is refused (HandleCache generations).
      if (env_.handles != nullptr) env_.handles->Invalidate(KeyOf(record));
      if (d.kind == Dirty::Kind::kData) env_.arc->PublishInPlace(d.buf, KeyOf(record), d.stored);
      if (hook) hook(record);
    }
  }
  // Then the copies go, under mu_ in O(1) per txg; a reader finds a
  // record's dirty copy or its cached version, never neither. They are
  // destroyed (their holds let go of) after mu_.
  std::vector<DirtyMap> gone;
  MutexLock l(&mu_);  // let go of before `gone` is destroyed
  commits_++;
  unsettled_txg_.store(UINT64_MAX, std::memory_order_release);
  GiveBases(txg);
  while (!dirty_.empty() && dirty_.begin()->first <= txg) {
    records_per_txg_ = std::min(dirty_.begin()->second.size(), kMaxReservedCopies);
    gone.push_back(std::move(dirty_.begin()->second));
    dirty_.erase(dirty_.begin());
  }
}

void VolumeImpl::GiveBases(uint64_t txg) {
  // A partial copy of the next txg lies over the version of its record that
  // just committed: it keeps that version held, so that its sync completes
  // from memory even when the ARC is too small to keep the record cached
  // until then.
  auto newer = dirty_.upper_bound(txg);
  auto listed = newer != dirty_.end() ? partial_records_.find(newer->first)
                                      : partial_records_.end();
  if (listed != partial_records_.end() && !closed_.load(std::memory_order_acquire)) {
    for (uint64_t record : listed->second) {
      auto f = newer->second.find(record);
      if (f == newer->second.end() || !f->second.partial || f->second.base) continue;
      // The newest committed copy of the record.
      for (auto it = std::make_reverse_iterator(newer); it != dirty_.rend(); ++it) {
        auto c = it->second.find(record);
        if (c == it->second.end()) continue;
        if (c->second.kind == Dirty::Kind::kData) {
          f->second.base = c->second.buf.Clone(arc::HolderKind::kDirtyRecord);
        }
        break;
      }
    }
  }
  // The lists up to the next txg's are done with: its partial copies made
  // from now on lie over a committed record already.
  const uint64_t done = newer != dirty_.end() ? newer->first : txg;
  while (!partial_records_.empty() && partial_records_.begin()->first <= done) {
    partial_records_.erase(partial_records_.begin());
  }
}

Status VolumeImpl::FreeAll(BlockSink* sink) {
  return tree_.Walk([sink](uint64_t, const BlockPointer& bp) { return sink->FreeBlock(bp); });
}

}  // namespace arcstore::volume
