// Volumes: theory of operation.
//
// A volume of S bytes is cut into records of R bytes (4 KiB .. 1 MiB). Each
// record has at most one committed version, reachable through the volume's
// BlockTree, and at most one dirty version per txg not yet committed:
//
//                      newest                                   oldest
//   reads look here:   dirty[open] -> dirty[quiescing] -> dirty[syncing]
//                        -> committed: handle cache -> ARC -> disk
//                           (the tree gives the block; verified on read)
//
// Committed records are read through the ARC (one read per record however
// many readers miss at once) and kept held in the pool's handle cache when
// hot. Both are keyed by record, not version: a read of the block the tree
// gave is cached only if no txg committed the record since (the handle
// cache by its generation, the ARC by `commits_`, checked under mu_ where
// TxgCommitted publishes); otherwise only its reader gets it
// (volumes.reads_uncached). Demand reads of consecutive records start the
// prefetcher, which reads ahead on the pool's work queue. Dirty copies are anon ARC buffers; when
// their txg commits they are published as the cached versions (and the
// handle cache drops the old ones) before the copies go.
//
// Writes. A write of new data first reserves a record of pool space
// (pool/space_admission.cc: it may wait for txgs to free space, or get
// NoSpace), then joins the open txg through the txg manager (which applies
// the write throttle) and, holding the txg, puts its bytes into the open
// txg's copy of each record it touches. When the open txg has no copy yet,
// one is made from the newest version: a whole-record write needs none; a
// partial write copies an older txg's dirty version (never changing it
// under its sync: copy-on-write in memory) when that version is itself
// partial; otherwise (no dirty version, or an older WHOLE one, such as the
// syncing txg's) it makes a PARTIAL copy that holds only the bytes written
// (the `known` ranges) and waits for neither the disk nor a 128 KiB copy
// (volumes.rmw_deferred):
//
//   partial copy:  | ?? | known | ???????? | known | ?? |
//                  ?? = the newest older whole copy's bytes while one
//                       exists, else the committed record's
//   sync of its txg: read the committed record (in parallel for all the
//   txg's partial copies), build the whole record in a new buffer without
//   mu_ and swap it in under mu_, then write it as usual; a copy whose
//   older whole copy committed while it waited holds that version (`base`,
//   pinned in the ARC) and is completed from it, so a small ARC never
//   turns these completions into disk reads
//
// This holds at any time while the copy exists: an older whole copy is
// the version below it until its txg commits, and then becomes the
// committed record (before the copy's own sync, since syncs go in order);
// a newer copy made from a partial one knows every byte that one knows,
// so no txg can change a ?? byte otherwise. A reader whose bytes are not
// all known takes them from the older whole copy, or reads the committed
// record and lays the known bytes over it (again if a txg committed
// meanwhile; and it looks at the copies again after the read, since an
// older copy may have been completed and a newer one made over it). Each
// completion is counted as a read-modify-write (volumes.rmw_reads), the
// number that tells a user the record size or the cache is wrong for the
// write pattern; with defer_partial_reads off, or once a copy has
// kMaxKnownRanges ranges, the writer reads the record itself and waits.
// Trims and zeroing of whole records store a hole or a zero marker instead
// of data; partial ones zero bytes in a copy.
//
// Sync. For txg T the pool's sync thread calls SyncTxg: every record dirty
// in T, in record order, is compressed, checksummed and written to new
// space (RecordSink), its pointer replaces the old one in the tree (the old
// block is freed, deferred by the allocator), then the tree writes its dirty
// indirect blocks bottom-up and gives the new root. The dirty copies of T
// stay readable until the pool has committed T (TxgCommitted), so a reader
// never finds a record missing in between. A reader that looked at the
// copies before T's was made (or whose copy is partial) may reach the tree
// after T's sync changed it: a block of T, maybe not yet written, is not
// read (unsettled_txg_, Busy) and the reader looks at the copies again,
// finding T's. TxgCommitted then makes each
// copy's buffer the cached version of its record in place, without mu_
// (the copies no longer change, and readers only copy bytes from them),
// and drops the txg's copies under mu_ in one step:
//
//   T committed:  dirty copy [buf] --PublishInPlace--> [buf] is also the
//                 ARC's version of the key (readers: either, same bytes)
//   then (mu_):   the copies of T go; readers find the ARC's version
//
// so a txg of any size stops writers and readers for O(1), not for the
// publication of every record.
//
// Durability. Every change is also appended to the pool's intent log
// (zil/intent_log.h) under mu_, so the log's order is the order changes
// were applied to each record; Flush and FUA commit the log (one log write
// and one device flush, batched with other committers). Without a log they
// wait for the open txg to commit. A write covering a whole record is
// logged by reference: the log holds the record copy's buffer instead of
// copying it (Dirty::logged), and a later change of that copy while the
// log still holds it goes into a new buffer (ApplyPiece: copy on write).
//
// Lent buffers. A caller that can fill memory the volume hands it
// (the NBD server receiving a WRITE's payload) asks PrepareWrite for it:
// a new record buffer for each whole record of the range, heap bytes for
// the partial ends. Writing it (WritePrepared) makes each lent buffer the
// record's dirty copy as it is (ApplyPiece: adopted), where a plain write
// copies its bytes into the copy. So a 1 MiB write into 64 KiB records is
// received straight into the 16 buffers that its txg will compress,
// checksum and write, and the log holds them by reference:
//
//   socket --recvmsg--> lent buffers --adopted--> dirty copies of txg T
//                                                  |  held by the log
//                                                  v
//                                         SyncTxg, then the ARC
//
// A writer holding txg T may apply its piece after txg T+1 copied the
// record (quiescing does not stop writers); the piece is then applied to
// the newer copies too, and logged with the newest txg that holds it.
//
// Asynchrony. Submit* run the operation on the pool's work queue and
// complete there; the synchronous calls run on the caller's thread.
// MayWait (volume_hint.cc) tells a caller with a thread of its own which
// operations would finish in memory there (cache and dirty-copy hits,
// writes the throttle lets through), from the dirty maps, the ARC's
// presence of the records and the txg manager's throttle state.
//
// Locking: mu_ guards the dirty maps; it is never held across I/O or a txg
// assignment. The tree has its own lock. Order: txg hold, then mu_, then the
// tree's lock (the sync thread takes the tree's lock without mu_).
//
// Limits: records per volume <= 2^48; dirty data is bounded by the txg
// manager's dirty_max; indirect blocks stay loaded once read (64 KiB each,
// covering 1024 records).
#include "volume/volume_impl.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "base/check.h"

namespace arcstore::volume {

using format::BlockPointer;
using format::BlockType;

namespace {
constexpr int kMaxAttempts = 32;             // a record changing under one operation
constexpr uint64_t kMaxLentBytes = 64 * kMiB;  // PrepareWrite lends record buffers up to this
constexpr size_t kMaxKnownRanges = 64;       // of a partial copy before a writer completes it
constexpr size_t kBaseReaders = 8;           // parallel reads completing a txg's partial copies
}  // namespace

VolumeStats::VolumeStats(stats::Registry* r)
    : rmw_reads(r->AddCounter("volumes", "rmw_reads", stats::Unit::kOps,
                              "partial record copies completed from the committed record")),
      rmw_held_bases(r->AddCounter("volumes", "rmw_held_bases", stats::Unit::kOps,
                                   "partial record copies completed from the committed "
                                   "version held since its txg committed (no read)")),
      rmw_deferred(r->AddCounter("volumes", "rmw_deferred", stats::Unit::kOps,
                                 "partial-record writes that did not wait for the record "
                                 "(read when its txg syncs)")),
      rmw_dirty(r->AddCounter("volumes", "rmw_dirty", stats::Unit::kOps,
                              "partial-record writes served by a dirty copy")),
      record_reads(r->AddCounter("volumes", "record_reads", stats::Unit::kOps,
                                 "committed records read from disk")),
      dirty_read_hits(r->AddCounter("volumes", "dirty_read_hits", stats::Unit::kOps,
                                    "reads served by a record's dirty copy")),
      reads_uncached(r->AddCounter("volumes", "reads_uncached", stats::Unit::kOps,
                                   "committed records read while a txg committed a newer "
                                   "version (given to the reader, not cached)")),
      log_shared_copies(r->AddCounter("volumes", "log_shared_copies", stats::Unit::kOps,
                                      "writes into a record whose buffer the intent log "
                                      "still held (logged by reference): a new buffer")),
      adopted_buffers(r->AddCounter("volumes", "adopted_buffers", stats::Unit::kOps,
                                    "whole records written from a buffer the volume lent "
                                    "(PrepareWrite): made the dirty copy, no copy")) {}

VolumeImpl::VolumeImpl(const format::VolumeEntry& entry, const VolumeEnv& env, VolumeStats* stats)
    : entry_(entry),
      record_bytes_(entry.record_size_bytes),
      records_(entry.records()),
      env_(env),
      stats_(stats),
      tree_(TreeShape{entry.guid, entry.records(), entry.tree_depth, entry.indirect_shift},
            entry.root, env.blocks) {}

VolumeImpl::~VolumeImpl() = default;

VolumeInfo VolumeImpl::info() const {
  VolumeInfo i;
  i.name = entry_.name;
  i.guid = entry_.guid;
  i.size_bytes = entry_.size_bytes;
  i.record_size_bytes = entry_.record_size_bytes;
  i.compression = std::string(format::CompressionName(entry_.compression));
  return i;
}

Status VolumeImpl::CheckOpen() const {
  if (closed_.load(std::memory_order_acquire)) {
    return Status::Aborted("volume " + entry_.name + " is closed");
  }
  return Status::Ok();
}

void VolumeImpl::Close() {
  closed_.store(true, std::memory_order_release);
  // Dirty copies left (a failed or never-synced txg) give their ARC
  // buffers back now: the pool's ARC may not outlive this call for long.
  MutexLock l(&mu_);
  dirty_.clear();
}

void VolumeImpl::MarkDestroyed() { closed_.store(true, std::memory_order_release); }

const VolumeImpl::Dirty* VolumeImpl::NewestDirty(uint64_t record, uint64_t* txg) {
  for (auto it = dirty_.rbegin(); it != dirty_.rend(); ++it) {
    auto f = it->second.find(record);
    if (f == it->second.end()) continue;
    if (txg != nullptr) *txg = it->first;
    return &f->second;
  }
  return nullptr;
}

const VolumeImpl::Dirty* VolumeImpl::WholeCopyBefore(uint64_t record, uint64_t txg) {
  for (auto it = std::make_reverse_iterator(dirty_.lower_bound(txg)); it != dirty_.rend(); ++it) {
    auto f = it->second.find(record);
    if (f != it->second.end() && !f->second.partial) return &f->second;
  }
  return nullptr;
}

// An anon buffer for a record copy. Its bytes are undefined: every user
// fills all of it (a copy of an older version, or zeros plus the piece).
arc::ArcHold VolumeImpl::NewBuffer() {
  return env_.arc->AllocateAnon(record_bytes_, arc::BufKind::kData, arc::HolderKind::kDirtyRecord);
}

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

Status VolumeImpl::Read(uint64_t offset, std::span<uint8_t> out) {
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

void VolumeImpl::Complete(Dirty& d, const uint8_t* base) const {
  if (!d.partial) return;
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
  d.partial = false;
  d.known.clear();
  d.base.Reset();
}

void VolumeImpl::WholeFrom(const Dirty& d, const uint8_t* base, uint8_t* out) const {
  if (base != nullptr) {
    std::memcpy(out, base, record_bytes_);
  } else {
    std::memset(out, 0, record_bytes_);
  }
  const uint8_t* known = d.buf.data().data();
  for (const auto& [b, e] : d.known) std::memcpy(out + b, known + b, e - b);
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
      std::memcpy(fresh.buf.mutable_data().data(), older->buf.data().data(), record_bytes_);
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
    std::memcpy(d.buf.mutable_data().data(), older->buf.data().data(), record_bytes_);
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
constexpr uint64_t kStreamTrigger = 2;     // records read in a row before prefetching
constexpr uint64_t kPrefetchRecords = 8;   // how far ahead
}  // namespace

void VolumeImpl::NoteSequential(uint64_t record) {
  if (!env_.prefetch || env_.work == nullptr) return;
  uint64_t from = 0, to = 0;
  {
    MutexLock l(&mu_);
    if (record != stream_last_) {
      stream_run_ = record == stream_last_ + 1 ? stream_run_ + 1 : 0;
      stream_last_ = record;
    }
    if (stream_run_ < kStreamTrigger) return;
    from = std::max(record + 1, stream_issued_);
    to = std::min(records_, record + 1 + kPrefetchRecords);
    if (from >= to) return;
    stream_issued_ = to;
  }
  for (uint64_t r = from; r < to; r++) {
    env_.work->Run([this, r] {
      if (!closed_.load(std::memory_order_acquire)) {
        (void)HoldCommitted(r, arc::AccessKind::kPrefetch);  // a failed prefetch is no error
      }
    });
  }
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

bool VolumeImpl::HasDataCopy(uint64_t txg, uint64_t record) const {
  auto it = dirty_.find(txg);
  if (it == dirty_.end()) return false;
  auto f = it->second.find(record);
  return f != it->second.end() && f->second.kind == Dirty::Kind::kData;
}

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
  if (reserved > 0) ARC_RETURN_IF_ERROR(space->Reserve(reserved, entry_.name));
  // A buffer for a new copy, allocated without the lock (it may wait for
  // the ARC to evict), or the piece's lent one.
  arc::ArcHold spare;
  if (piece.lent != nullptr) {
    spare = std::move(*piece.lent);
  } else if (becomes_data && estimate > 0) {
    spare = NewBuffer();
  }
  Result<txg::TxgHold> assigned =
      in_memory ? env_.txg->AssignNoThrottle(estimate) : env_.txg->Assign(estimate);
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
  bool applied = false;
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    if (!applied) {
      Applied a;
      uint64_t commits_seen = 0, changes_seen = 0;
      {
        MutexLock l(&mu_);
        const bool had_copy = HasDataCopy(t, record);
        a = TryApply(t, record, piece, &spare);
        if (a == Applied::kDone) {
          applied = true;
          // The sync of t allocates the record: this piece made its copy.
          if (!had_copy && HasDataCopy(t, record)) settlement.Use(record_bytes_);
          if (FinishPiece(t, record, piece, &spare)) return Status::Ok();
        }
        commits_seen = commits_;
        changes_seen = tree_changes_;
      }
      if (a == Applied::kNeedBase) {
        // Read-modify-write from the committed record, without the lock;
        // then look again, since another writer may have made a copy
        // meanwhile. A txg that committed meanwhile may have changed the
        // record (its dirty copy is gone now): the base read before is
        // stale then, and is read again.
        Result<arc::ArcHold> read = HoldCommitted(record, arc::AccessKind::kDemand);
        if (!read.ok()) {
          // A partial copy's base read while a sync replaced the record
          // with a block still being written: read again.
          MutexLock l(&mu_);
          if (commits_ == commits_seen && tree_changes_ == changes_seen) return read.status();
          continue;
        }
        const arc::ArcHold& base = *read;
        stats_->rmw_reads->Add();
        if (!spare) spare = NewBuffer();
        MutexLock l(&mu_);
        const bool had_copy = HasDataCopy(t, record);
        a = TryApply(t, record, piece, &spare);
        if (a == Applied::kNeedBase &&
            (commits_ != commits_seen || tree_changes_ != changes_seen)) {
          continue;
        }
        if (a == Applied::kNeedBase) a = ApplyWithBase(t, record, piece, &spare, base);
        if (a == Applied::kDone) {
          applied = true;
          // The sync of t allocates the record: this piece made its copy.
          if (!had_copy && HasDataCopy(t, record)) settlement.Use(record_bytes_);
          if (FinishPiece(t, record, piece, &spare)) return Status::Ok();
        }
        continue;  // kNeedBuffer or a newer copy needs one: allocate below
      }
    } else {
      MutexLock l(&mu_);
      if (FinishPiece(t, record, piece, &spare)) return Status::Ok();
    }
    if (!spare) spare = NewBuffer();
  }
  return Status::Internal("volume " + entry_.name + ": record " + std::to_string(record) +
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

// The engine's PreparedWrite: one piece per record of the range, a lent
// record buffer for each whole record, heap bytes for the partial ends.
class VolumeImpl::RecordPreparedWrite final : public PreparedWrite {
 public:
  RecordPreparedWrite(const VolumeImpl* volume, uint64_t offset, uint64_t length)
      : PreparedWrite(offset, length), owner(volume) {}
  void Add(std::span<uint8_t> bytes, arc::ArcHold buffer) {
    pieces_.push_back(bytes);
    lent.push_back(std::move(buffer));
  }

  const VolumeImpl* const owner;
  std::vector<arc::ArcHold> lent;   // per piece; empty: the piece is in `heap`
  std::unique_ptr<uint8_t[]> heap;  // the partial pieces' bytes
};

std::unique_ptr<PreparedWrite> VolumeImpl::PrepareWrite(uint64_t offset, uint64_t length) {
  // A range the write will refuse, or one too long to lend: a plain buffer.
  if (!CheckRange("write", offset, length, entry_.size_bytes).ok() || length > kMaxLentBytes ||
      env_.read_only) {
    return Volume::PrepareWrite(offset, length);
  }
  auto prepared = std::make_unique<RecordPreparedWrite>(this, offset, length);
  // The pieces are cut as WriteRange cuts them: one per record.
  auto each_piece = [&](auto&& fn) {
    for (uint64_t pos = 0; pos < length;) {
      const uint64_t in_record = (offset + pos) % record_bytes_;
      const uint64_t n = std::min<uint64_t>(record_bytes_ - in_record, length - pos);
      fn(n, in_record == 0 && n == record_bytes_);
      pos += n;
    }
  };
  uint64_t heap_bytes = 0;
  each_piece([&](uint64_t n, bool whole) { heap_bytes += whole ? 0 : n; });
  if (heap_bytes > 0) prepared->heap.reset(new uint8_t[heap_bytes]);
  uint64_t heap_at = 0;
  each_piece([&](uint64_t n, bool whole) {
    if (whole) {
      arc::ArcHold buffer = NewBuffer();
      prepared->Add(buffer.mutable_data(), std::move(buffer));
    } else {
      prepared->Add(std::span<uint8_t>(prepared->heap.get() + heap_at, n), arc::ArcHold());
      heap_at += n;
    }
  });
  return prepared;
}

Status VolumeImpl::WriteLent(RecordPreparedWrite* prepared, uint32_t write_flags) {
  Status s = WriteRange(prepared->offset(), prepared->length(), nullptr, Dirty::Kind::kData,
                        "write", /*replay=*/false, prepared);
  if (s.ok() && (write_flags & kFua) != 0) s = Flush();
  return s;
}

Status VolumeImpl::WritePrepared(std::unique_ptr<PreparedWrite> prepared, uint32_t write_flags) {
  auto* mine = dynamic_cast<RecordPreparedWrite*>(prepared.get());
  if (mine == nullptr || mine->owner != this) {
    return Volume::WritePrepared(std::move(prepared), write_flags);
  }
  return WriteLent(mine, write_flags);
}

void VolumeImpl::SubmitPrepared(std::unique_ptr<PreparedWrite> prepared, uint32_t write_flags,
                                Completion done) {
  auto* mine = dynamic_cast<RecordPreparedWrite*>(prepared.get());
  if (mine == nullptr || mine->owner != this) {
    Volume::SubmitPrepared(std::move(prepared), write_flags, std::move(done));
    return;
  }
  std::shared_ptr<PreparedWrite> owned = std::move(prepared);
  Dispatch([this, owned, mine, write_flags, done = std::move(done)] {
    done(WriteLent(mine, write_flags));
  });
}

Status VolumeImpl::WriteRange(uint64_t offset, uint64_t length, const uint8_t* data,
                              Dirty::Kind full_kind, const char* op, bool replay,
                              RecordPreparedWrite* prepared) {
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

Status VolumeImpl::Flush() {
  ARC_RETURN_IF_ERROR(CheckOpen());
  if (env_.read_only) return Status::Ok();  // nothing to make durable (a replay stays in memory)
  if (env_.log != nullptr) return env_.log->Commit();
  return env_.txg->WaitSynced(env_.txg->open_txg(), txg::SyncReason::kExplicitWait);
}

Status VolumeImpl::Write(uint64_t offset, std::span<const uint8_t> data, uint32_t write_flags) {
  Status s = WriteRange(offset, data.size(), data.data(), Dirty::Kind::kData, "write");
  if (s.ok() && (write_flags & kFua) != 0) s = Flush();
  return s;
}

Status VolumeImpl::Trim(uint64_t offset, uint64_t length) {
  return WriteRange(offset, length, nullptr, Dirty::Kind::kHole, "trim");
}

Status VolumeImpl::WriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags) {
  // Zeroing whole records stores a zero marker: never slower than writing
  // zeros, so FAST_ZERO requests always succeed.
  const Dirty::Kind kind = (zero_flags & kZeroNoHole) ? Dirty::Kind::kData : Dirty::Kind::kZero;
  return WriteRange(offset, length, nullptr, kind, "write zeroes");
}

Status VolumeImpl::Cache(uint64_t offset, uint64_t length) {
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

void VolumeImpl::Dispatch(std::function<void()> op) {
  if (env_.work != nullptr) {
    env_.work->Run(std::move(op));
  } else {
    op();
  }
}

void VolumeImpl::SubmitRead(uint64_t offset, std::span<uint8_t> out, Completion done) {
  Dispatch([this, offset, out, done = std::move(done)] { done(Read(offset, out)); });
}

void VolumeImpl::SubmitWrite(uint64_t offset, std::span<const uint8_t> data, uint32_t write_flags,
                             Completion done) {
  Dispatch([this, offset, data, write_flags, done = std::move(done)] {
    done(Write(offset, data, write_flags));
  });
}

void VolumeImpl::SubmitFlush(Completion done) {
  Dispatch([this, done = std::move(done)] { done(Flush()); });
}

void VolumeImpl::SubmitTrim(uint64_t offset, uint64_t length, Completion done) {
  Dispatch([this, offset, length, done = std::move(done)] { done(Trim(offset, length)); });
}

void VolumeImpl::SubmitWriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags,
                                   Completion done) {
  Dispatch([this, offset, length, zero_flags, done = std::move(done)] {
    done(WriteZeroes(offset, length, zero_flags));
  });
}

void VolumeImpl::SubmitCache(uint64_t offset, uint64_t length, Completion done) {
  Dispatch([this, offset, length, done = std::move(done)] { done(Cache(offset, length)); });
}

void VolumeImpl::SubmitBlockStatus(uint64_t offset, uint64_t length, ExtentsCompletion done) {
  Dispatch([this, offset, length, done = std::move(done)] {
    std::vector<Extent> extents;
    Status s = BlockStatus(offset, length, &extents);
    done(std::move(s), std::move(extents));
  });
}

Status VolumeImpl::BlockStatus(uint64_t offset, uint64_t length, std::vector<Extent>* out) {
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

Status VolumeImpl::CompletePartials(const std::vector<std::pair<uint64_t, Dirty*>>& partials) {
  // The records under the partial copies, read in parallel (each is a
  // demand read: this sync waits for them). Every byte a copy does not know
  // is the committed record's: no txg between the copy and now changed it
  // (that txg's copy would be older and known it).
  //
  // Each whole copy is built in a new buffer without mu_ and swapped in
  // under it. The txg is quiesced, so nothing but this sync changes its
  // copies (writers of the next txg and readers only read them, under
  // mu_), and reading them here without the lock is safe. Filling the
  // copies in place under mu_ instead kept every writer of the volume
  // waiting for it: these threads run at the sync thread's nice value (19,
  // --sync-nice), and one preempted while holding mu_ stalled 4 KiB writes
  // for up to 230 ms (8 NBD clients writing 4 KiB at random into 64 KiB
  // records with a flush after each, ~6.5k partial copies a txg; p99.9 of
  // a WRITE 21-33 ms).
  std::function<void(uint64_t)> hook;
  {
    MutexLock l(&mu_);
    hook = complete_hook_;
  }
  std::atomic<size_t> next{0};
  Mutex error_mu;
  Status error;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < partials.size();) {
      const auto& [record, d] = partials[i];
      arc::ArcHold base;
      {
        MutexLock l(&mu_);
        // Only this sync completes the quiesced txg's copies (see above), so
        // every copy listed is still partial; a whole one must not be
        // rebuilt from the committed record, which would lose its bytes.
        if (!d->partial) continue;
        // The committed record, held since its txg committed: no read.
        if (d->base) base = d->base.Clone(arc::HolderKind::kDirtyRecord);
      }
      const bool held = static_cast<bool>(base);
      if (!held) {
        Result<arc::ArcHold> read = HoldCommitted(record, arc::AccessKind::kDemand);
        if (!read.ok()) {
          MutexLock l(&error_mu);
          if (error.ok()) {
            error = read.status().WithContext("volume " + entry_.name + ": completing record " +
                                              std::to_string(record));
          }
          return;
        }
        base = std::move(*read);  // empty: a hole, zeros
      }
      arc::ArcHold whole = NewBuffer();
      WholeFrom(*d, BytesOf(base), whole.mutable_data().data());
      stats_->rmw_reads->Add();
      if (held) stats_->rmw_held_bases->Add();
      if (hook) hook(record);
      MutexLock l(&mu_);
      d->buf = std::move(whole);
      d->partial = false;
      d->known.clear();
      d->base.Reset();
    }
  };
  std::vector<std::thread> readers;
  for (size_t i = 1; i < std::min(kBaseReaders, partials.size()); i++) readers.emplace_back(work);
  work();
  for (auto& t : readers) t.join();
  MutexLock l(&error_mu);
  return error;
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
  // it is walked without mu_ (12k records took 3.5 ms under it).
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
    } else if (d->kind == Dirty::Kind::kZero) {
      bp.type = BlockType::kZero;
      bp.logical_bytes = record_bytes_;
    } else {
      bp.type = BlockType::kData;
      bp.compression = entry_.compression;
      bp.fill = 1;
      ARC_ASSIGN_OR_RETURN(bp, sink->WriteRecord(bp, d->buf.data(), record_bytes_));
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
  // same bytes). Publishing a whole txg under mu_ took 12-29 ms for 12k
  // records, every writer and reader of the volume blocked meanwhile.
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
      if (d.kind == Dirty::Kind::kData) env_.arc->PublishInPlace(d.buf, KeyOf(record));
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

VolumeImpl::DirtyMap& VolumeImpl::MapOf(uint64_t txg) {
  auto [it, created] = dirty_.try_emplace(txg);
  // Sized like the last txg committed: growing a map rehashes every copy in
  // it under mu_ (a txg of 12k records grew through a rehash of 6k that
  // stalled every writer 1-3 ms).
  if (created) it->second.reserve(records_per_txg_);
  return it->second;
}

void VolumeImpl::AddCopy(DirtyMap* mine, uint64_t txg, uint64_t record, Dirty copy) {
  if (copy.partial) partial_records_[txg].push_back(record);
  mine->emplace(record, std::move(copy));
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
