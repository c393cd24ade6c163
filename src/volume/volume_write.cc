#include "volume/volume_impl.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace arcstore::volume {

namespace {
constexpr size_t kMaxKnownRanges = 64;  // of a partial copy before a writer completes it
}  // namespace

void VolumeImpl::AddKnown(Dirty& d, uint64_t begin, uint64_t end) const {
  auto& k = d.known;
  // Merge [begin, end) with every range it overlaps or touches.
  auto first = std::lower_bound(k.begin(), k.end(), begin,
                                [](const auto& r, uint64_t b) { return r.second < b; });
  auto last = first;
  for (; last != k.end() && last->first <= end; ++last) {
    begin = std::min<uint64_t>(begin, last->first);
    end = std::max<uint64_t>(end, last->second);
  }
  auto at = k.erase(first, last);
  k.insert(at, {static_cast<uint32_t>(begin), static_cast<uint32_t>(end)});
  if (k.size() == 1 && k[0].first == 0 && k[0].second >= record_bytes_) {
    d.partial = false;
    k.clear();
  }
}

void VolumeImpl::CopyToNewer(const Dirty& d, uint8_t* dst) const {
  if (d.partial) {
    // A partial copy over a committed record is most often a few small
    // writes: their bytes, not the record's size, are what it costs.
    Overlay(d, 0, record_bytes_, dst);
  } else {
    std::memcpy(dst, d.buf.data().data(), record_bytes_);
  }
}

bool VolumeImpl::NeedsBuffer(const Dirty& d, const Piece& piece) {
  if (piece.whole && piece.full_kind != Dirty::Kind::kData) return false;
  return d.kind != Dirty::Kind::kData || LogShares(d);
}

void VolumeImpl::ApplyPiece(Dirty& d, const Piece& piece, arc::ArcHold* spare) const {
  if (piece.lent != nullptr && spare != nullptr && *spare && spare->data().data() == piece.data) {
    // The piece's bytes already fill a buffer of their own: it becomes the
    // copy, whatever the copy was (a buffer the log holds stays the log's).
    d.kind = Dirty::Kind::kData;
    d.buf = std::move(*spare);
    d.partial = false;
    d.known.clear();
    d.base.Reset();
    d.logged = false;
    stats_->adopted_buffers->Add();
    return;
  }
  if (piece.whole && piece.full_kind != Dirty::Kind::kData) {
    d.kind = piece.full_kind;
    d.buf.Reset();
    d.logged = false;
    d.partial = false;
    d.known.clear();
    return;
  }
  if (d.kind == Dirty::Kind::kData && d.logged) {
    if (d.buf.shared()) {
      // The log still holds this version: the piece goes into a new buffer
      // (a whole record overwrites it all, anything else starts as a copy).
      ARC_CHECK(spare != nullptr && *spare) << "a logged copy changes without a buffer";
      arc::ArcHold fresh = std::move(*spare);
      if (!(piece.whole && piece.data != nullptr && piece.n == record_bytes_)) {
        std::memcpy(fresh.mutable_data().data(), d.buf.data().data(), record_bytes_);
      }
      d.buf = std::move(fresh);
      stats_->log_shared_copies->Add();
    }
    d.logged = false;
  }
  if (d.kind != Dirty::Kind::kData) {
    d.kind = Dirty::Kind::kData;
    d.buf = std::move(*spare);
    // A whole record of data overwrites every byte; anything else starts
    // from zeros (a hole or zero marker reads as zeros).
    if (!(piece.whole && piece.data != nullptr && piece.n == record_bytes_)) {
      std::memset(d.buf.mutable_data().data(), 0, record_bytes_);
    }
  }
  uint8_t* dst = d.buf.mutable_data().data() + piece.in_record;
  if (piece.data != nullptr) {
    std::memcpy(dst, piece.data, piece.n);
  } else {
    std::memset(dst, 0, piece.n);
    // A trim wants a hole, a zeroing a zero marker (either wins over the
    // other as a zero marker); NO_HOLE wants the record kept as data.
    using K = Dirty::Kind;
    if (piece.full_kind == K::kData) {
      d.zeroed_as = K::kData;
    } else if (piece.full_kind == K::kZero || d.zeroed_as == K::kZero) {
      d.zeroed_as = K::kZero;
    } else {
      d.zeroed_as = K::kHole;
    }
  }
  if (!d.partial) return;
  if (piece.whole) {
    // Every byte of the volume's part of the record; the rest of a short
    // last record is zeros.
    std::memset(dst + piece.n, 0, record_bytes_ - piece.n);
    d.partial = false;
    d.known.clear();
  } else {
    AddKnown(d, piece.in_record, piece.in_record + piece.n);
  }
}

VolumeImpl::Applied VolumeImpl::TryApply(uint64_t txg, uint64_t record, const Piece& piece,
                                         arc::ArcHold* spare) {
  const bool becomes_data = !(piece.whole && piece.full_kind != Dirty::Kind::kData);
  auto fragmented = [](const Dirty& d) { return d.partial && d.known.size() >= kMaxKnownRanges; };
  DirtyMap& mine = MapOf(txg);
  auto it = mine.find(record);
  if (it != mine.end()) {
    if (NeedsBuffer(it->second, piece) && !*spare) return Applied::kNeedBuffer;
    if (!piece.whole && fragmented(it->second)) {
      // Too many ranges: complete the copy, from an older whole copy when
      // there is one, else from the committed record.
      const Dirty* whole = WholeCopyBefore(record, txg);
      if (whole == nullptr) return Applied::kNeedBase;
      Complete(it->second, BytesOf(*whole));
    }
    ApplyPiece(it->second, piece, spare);
    return Applied::kDone;
  }
  uint64_t older_txg = 0;
  const Dirty* older = piece.whole ? nullptr : NewestDirty(record, &older_txg);
  const Dirty* whole_base = nullptr;  // completes a fragmented copy of `older`
  if (older != nullptr && fragmented(*older)) {
    whole_base = WholeCopyBefore(record, older_txg);
    if (whole_base == nullptr) return Applied::kNeedBase;
  }
  if (!piece.whole && older == nullptr && !env_.defer_partial_reads) return Applied::kNeedBase;
  if (becomes_data && !*spare) return Applied::kNeedBuffer;
  Dirty fresh;
  // Over an older whole copy of data (the syncing txg's, typically: with
  // random small writes nearly every record has one) a partial write makes
  // a partial copy too, instead of copying the whole record now: the ??
  // bytes are that copy's while it exists (readers take them from it), and
  // the committed record's once it has committed, which is before this
  // copy's own sync completes it. The writer copies piece.n bytes, not a
  // record.
  const bool over_whole = older != nullptr && older->kind == Dirty::Kind::kData &&
                          !older->partial && env_.defer_partial_reads;
  if (older != nullptr && !over_whole) {
    // A copy: the older txg's version stays as its sync sees it.
    fresh.kind = older->kind;
    if (older->kind == Dirty::Kind::kData) {
      fresh.buf = std::move(*spare);
      CopyToNewer(*older, fresh.buf.mutable_data().data());
      fresh.partial = older->partial;
      fresh.known = older->known;
      if (whole_base != nullptr) Complete(fresh, BytesOf(*whole_base));
    }
    stats_->rmw_dirty->Add();
  } else if (piece.whole) {
    fresh.kind = Dirty::Kind::kHole;  // ApplyPiece makes it what the piece says
  } else {
    // A partial copy: the piece's bytes only, without waiting for the
    // older copy's or the committed record's (read when the txg syncs).
    fresh.kind = Dirty::Kind::kData;
    fresh.buf = std::move(*spare);
    fresh.partial = true;
    stats_->rmw_deferred->Add();
  }
  ApplyPiece(fresh, piece, spare);
  AddCopy(&mine, txg, record, std::move(fresh));
  return Applied::kDone;
}

VolumeImpl::Applied VolumeImpl::ApplyWithBase(uint64_t txg, uint64_t record, const Piece& piece,
                                              arc::ArcHold* spare, const arc::ArcHold& base) {
  DirtyMap& mine = MapOf(txg);
  auto it = mine.find(record);
  if (it != mine.end()) {
    if (NeedsBuffer(it->second, piece) && !*spare) return Applied::kNeedBuffer;
    Complete(it->second, BytesOf(base));  // a fragmented partial copy
    ApplyPiece(it->second, piece, spare);
    return Applied::kDone;
  }
  if (!*spare) return Applied::kNeedBuffer;
  const Dirty* older = NewestDirty(record);
  Dirty d;
  d.kind = Dirty::Kind::kData;
  d.buf = std::move(*spare);
  if (older != nullptr && older->kind == Dirty::Kind::kData) {
    CopyToNewer(*older, d.buf.mutable_data().data());
    d.partial = older->partial;
    d.known = older->known;
  } else if (older != nullptr) {
    std::memset(d.buf.mutable_data().data(), 0, record_bytes_);
  } else {
    d.partial = true;  // nothing known yet: Complete copies all of `base`
  }
  Complete(d, BytesOf(base));
  ApplyPiece(d, piece, nullptr);
  AddCopy(&mine, txg, record, std::move(d));
  return Applied::kDone;
}

namespace {

// Settles a writer's space reservation when it leaves WritePiece, while it
// still holds its txg (declared after the hold, so destroyed before it).
class SpaceSettlement {
 public:
  SpaceSettlement(SpaceAccount* account, uint64_t reserved_bytes, uint64_t txg)
      : account_(account), reserved_bytes_(reserved_bytes), txg_(txg) {}
  ~SpaceSettlement() {
    if (account_ != nullptr && (reserved_bytes_ > 0 || used_bytes_ > 0)) {
      account_->Settle(reserved_bytes_, txg_, used_bytes_);
    }
  }
  SpaceSettlement(const SpaceSettlement&) = delete;
  SpaceSettlement& operator=(const SpaceSettlement&) = delete;
  void Use(uint64_t bytes) { used_bytes_ += bytes; }

 private:
  SpaceAccount* const account_;
  const uint64_t reserved_bytes_, txg_;
  uint64_t used_bytes_ = 0;
};

}  // namespace

Status VolumeImpl::WritePiece(uint64_t record, const Piece& piece, bool replay) {
  uint64_t estimate = record_bytes_;
  const uint64_t open = env_.txg->open_txg();
  {
    MutexLock l(&mu_);
    // The open txg's copy takes no new dirty bytes. (The newest copy may be
    // the syncing txg's; a new copy of the record is then charged.)
    auto it = dirty_.find(open);
    if (it != dirty_.end() && it->second.count(record) != 0) estimate = 0;
  }
  // Whole-record holes and zeros take no data space; everything else may.
  const bool becomes_data = !(piece.whole && piece.full_kind != Dirty::Kind::kData);
  const bool in_memory = replay && env_.read_only;  // nothing will sync it
  SpaceAccount* const space = in_memory ? nullptr : env_.space;
  // New data is charged to the pool's space before the writer joins a txg
  // (space_admission.cc): one record, settled once the copy is made.
  const uint64_t reserved = becomes_data && space != nullptr ? estimate : 0;
  uint64_t start_ns = WaitStart();
  if (reserved > 0) ARC_RETURN_IF_ERROR(space->Reserve(reserved, entry_.name));
  CountWait(WriterWait::kSpace, start_ns, piece.waits);
  // A buffer for a new copy, allocated without the lock (it may wait for
  // the ARC to evict), or the piece's lent one.
  arc::ArcHold spare;
  if (piece.lent != nullptr) {
    spare = std::move(*piece.lent);
  } else if (becomes_data && estimate > 0) {
    spare = NewBufferForWriter(piece.waits);
  }
  start_ns = WaitStart();
  Result<txg::TxgHold> assigned =
      in_memory ? env_.txg->AssignNoThrottle(estimate) : env_.txg->Assign(estimate);
  CountWait(WriterWait::kThrottle, start_ns, piece.waits);
  if (!assigned.ok()) {
    if (reserved > 0) space->Settle(reserved, 0, 0);
    return assigned.status();
  }
  txg::TxgHold hold = std::move(*assigned);
  // The lent bytes (piece.data) stay valid until this returns, even if the
  // copy that adopted them is replaced meanwhile (FinishPiece may read them
  // again after dropping the lock). Declared after `hold`, so let go of
  // before it: the txg cannot publish the buffer while this hold exists.
  const arc::ArcHold lent_alive =
      piece.lent != nullptr ? spare.Clone(arc::HolderKind::kDirtyRecord) : arc::ArcHold();
  const uint64_t t = hold.txg();
  SpaceSettlement settlement(space, reserved, t);
  PieceWrite w{t, record, &piece, &spare};
  const Status s = ApplyRetrying(&w);
  settlement.Use(w.new_copy_bytes);
  return s;
}

VolumeImpl::Applied VolumeImpl::ApplyAndFinish(PieceWrite* w, const arc::ArcHold* base,
                                               const TreeSeen& seen) {
  if (!w->applied) {
    const bool had_copy = HasDataCopy(w->txg, w->record);
    Applied a = TryApply(w->txg, w->record, *w->piece, w->spare);
    if (a == Applied::kNeedBase && base != nullptr) {
      // A txg committed since the base was read (it may be older than the
      // record's version now), or a sync began changing the tree (it may
      // be a block still being written): the caller reads it again.
      if (commits_ != seen.commits || tree_changes_ != seen.changes) return Applied::kNeedBase;
      a = ApplyWithBase(w->txg, w->record, *w->piece, w->spare, *base);
    }
    if (a != Applied::kDone) return a;
    w->applied = true;
    // The sync of the txg allocates the record: this piece made its copy.
    if (!had_copy && HasDataCopy(w->txg, w->record)) w->new_copy_bytes += record_bytes_;
  }
  return FinishPiece(w->txg, w->record, *w->piece, w->spare) ? Applied::kDone
                                                             : Applied::kNeedBuffer;
}

Status VolumeImpl::ApplyRetrying(PieceWrite* w) {
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    Applied a;
    TreeSeen seen;
    LockForWriter(w->piece->waits);
    a = ApplyAndFinish(w, nullptr, seen);
    seen = TreeSeen{commits_, tree_changes_};
    mu_.Unlock();
    if (a == Applied::kDone) return Status::Ok();
    if (a == Applied::kNeedBase) {
      // Read-modify-write from the committed record, without the lock;
      // then look again, since another writer may have made a copy
      // meanwhile.
      const uint64_t start_ns = WaitStart();
      Result<arc::ArcHold> read = HoldCommitted(w->record, arc::AccessKind::kDemand);
      CountWait(WriterWait::kRmwRead, start_ns, w->piece->waits);
      if (!read.ok()) {
        // A partial copy's base read while a sync replaced the record
        // with a block still being written: read again.
        MutexLock l(&mu_);
        if (commits_ == seen.commits && tree_changes_ == seen.changes) return read.status();
        continue;
      }
      stats_->rmw_reads->Add();
      if (!*w->spare) *w->spare = NewBufferForWriter(w->piece->waits);
      MutexLock l(&mu_);
      if (ApplyAndFinish(w, &*read, seen) == Applied::kDone) return Status::Ok();
      continue;  // kNeedBuffer or a newer copy needs one: allocated next time
    }
    if (!*w->spare) *w->spare = NewBufferForWriter(w->piece->waits);
  }
  return Status::Internal("volume " + entry_.name + ": record " + std::to_string(w->record) +
                          " kept changing under a write");
}

bool VolumeImpl::FinishPiece(uint64_t txg, uint64_t record, const Piece& piece,
                             arc::ArcHold* spare) {
  // A newer txg may have copied this record while this writer still held
  // `txg` (quiescing does not stop writers): the copy must not lose the
  // piece. Newer copies needing a buffer take `spare`, one at a time.
  uint64_t newest = txg;
  Dirty* newest_copy = nullptr;
  for (auto it = dirty_.upper_bound(txg); it != dirty_.end(); ++it) {
    auto f = it->second.find(record);
    if (f == it->second.end()) continue;
    Dirty& d = f->second;
    if (NeedsBuffer(d, piece) && !*spare) return false;
    ApplyPiece(d, piece, spare);
    newest = it->first;
    newest_copy = &d;
  }
  if (env_.log == nullptr) return true;
  // In apply order (this lock), with the newest txg holding the piece.
  using format::LogRecordType;
  const uint64_t offset = record * record_bytes_ + piece.in_record;
  if (piece.data != nullptr && piece.whole && piece.n == record_bytes_) {
    // A whole record: its copy holds exactly the piece, so the log takes a
    // hold on that buffer instead of copying it; the copy is not written
    // in place while the log holds it.
    if (newest_copy == nullptr) newest_copy = &dirty_[txg].at(record);
    ARC_CHECK(newest_copy->kind == Dirty::Kind::kData && !newest_copy->partial);
    newest_copy->logged = true;
    env_.log->AppendHeld(entry_.guid, newest, offset, piece.n,
                         newest_copy->buf.Clone(arc::HolderKind::kIntentLog));
    return true;
  }
  LogRecordType type = LogRecordType::kWrite;
  if (piece.data == nullptr) {
    type = piece.full_kind == Dirty::Kind::kHole   ? LogRecordType::kTrim
           : piece.full_kind == Dirty::Kind::kZero ? LogRecordType::kZero
                                                   : LogRecordType::kZeroNoHole;
  }
  env_.log->Append(type, entry_.guid, newest, offset, piece.n, piece.data);
  return true;
}

Status VolumeImpl::WriteRange(uint64_t offset, uint64_t length, const uint8_t* data,
                              Dirty::Kind full_kind, const char* op, bool replay,
                              RecordPreparedWrite* prepared, WriterWaits* waits) {
  ARC_RETURN_IF_ERROR(CheckOpen());
  ARC_RETURN_IF_ERROR(CheckRange(op, offset, length, entry_.size_bytes));
  if (env_.read_only && !replay) {
    return Status::InvalidArgument("volume " + entry_.name + ": " + op +
                                   " on a pool opened read-only");
  }
  for (uint64_t pos = 0; pos < length;) {
    const uint64_t at = offset + pos;
    Piece piece;
    const uint64_t record = at / record_bytes_;
    piece.in_record = at % record_bytes_;
    piece.n = std::min<uint64_t>(record_bytes_ - piece.in_record, length - pos);
    // The last record of a volume whose size is not a multiple of the
    // record size is whole when the write reaches the volume's end.
    const uint64_t record_end = std::min<uint64_t>((record + 1) * record_bytes_, entry_.size_bytes);
    piece.whole = piece.in_record == 0 && at + piece.n == record_end;
    piece.data = data == nullptr ? nullptr : data + pos;
    if (prepared != nullptr) {
      const size_t i = static_cast<size_t>(record - offset / record_bytes_);
      ARC_CHECK(i < prepared->pieces().size() && prepared->pieces()[i].size() == piece.n)
          << "a prepared write's pieces do not match its records";
      piece.data = prepared->pieces()[i].data();
      if (prepared->lent[i]) piece.lent = &prepared->lent[i];
    }
    piece.full_kind = full_kind;
    piece.waits = waits;
    Status s = WritePiece(record, piece, replay);
    if (!s.ok()) {
      return s.WithContext("volume " + entry_.name + " " + op + " at offset " + std::to_string(at));
    }
    pos += piece.n;
  }
  return Status::Ok();
}

Status VolumeImpl::ApplyLogRecord(const format::LogRecord& r) {
  using format::LogRecordType;
  switch (r.type) {
    case LogRecordType::kWrite:
      if (r.data.size() != r.length) {
        return Status::Corruption("log record " + std::to_string(r.seq) + " carries " +
                                  std::to_string(r.data.size()) + " bytes for a write of " +
                                  std::to_string(r.length));
      }
      return WriteRange(r.offset, r.length, r.data.data(), Dirty::Kind::kData, "log replay write",
                        true);
    case LogRecordType::kTrim:
      return WriteRange(r.offset, r.length, nullptr, Dirty::Kind::kHole, "log replay trim", true);
    case LogRecordType::kZero:
      return WriteRange(r.offset, r.length, nullptr, Dirty::Kind::kZero, "log replay zeroing",
                        true);
    case LogRecordType::kZeroNoHole:
      return WriteRange(r.offset, r.length, nullptr, Dirty::Kind::kData, "log replay zeroing",
                        true);
  }
  return Status::Corruption("log record " + std::to_string(r.seq) + " has an unknown type");
}

Status VolumeImpl::WriteNow(const VolumeRequest& req, WriterWaits* waits) {
  if (auto* mine = dynamic_cast<RecordPreparedWrite*>(req.prepared.get());
      mine != nullptr && mine->owner == this) {
    return WriteLent(mine, req.flags, waits);
  }
  const std::span<const uint8_t> data = req.bytes();
  if (data.size() != req.length) {
    return Status::InvalidArgument("volume " + entry_.name +
                                   ": a prepared write of several pieces that this volume did "
                                   "not lend");
  }
  Status s = WriteRange(req.offset, data.size(), data.data(), Dirty::Kind::kData, "write",
                        false, nullptr, waits);
  if (s.ok() && (req.flags & kFua) != 0) s = FlushNow();
  return s;
}

Status VolumeImpl::WriteZeroesNow(uint64_t offset, uint64_t length, uint32_t zero_flags,
                                  WriterWaits* waits) {
  // Zeroing whole records stores a zero marker: never slower than writing
  // zeros, so FAST_ZERO requests always succeed.
  const Dirty::Kind kind = (zero_flags & kZeroNoHole) ? Dirty::Kind::kData : Dirty::Kind::kZero;
  return WriteRange(offset, length, nullptr, kind, "write zeroes", false, nullptr, waits);
}

}  // namespace arcstore::volume
