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
// prefetcher (prefetcher.h), which reads ahead on the pool's work queue.
// Dirty copies are anon ARC buffers; when their txg commits they are
// published as the cached versions (and the handle cache drops the old
// ones) before the copies go.
//
// Writes. A write of new data first reserves a record of pool space
// (pool/space_admission.cc: it may wait for txgs to free space, or get
// NoSpace), then joins the open txg through the txg manager (which applies
// the write throttle) and, holding the txg, puts its bytes into the open
// txg's copy of each record it touches. When the open txg has no copy yet,
// one is made from the newest version: a whole-record write needs none; a
// partial write copies an older txg's dirty version (never changing it
// under its sync: copy-on-write in memory) when that version is itself
// partial, taking only the ranges it knows (volumes.rmw_dirty); otherwise
// (no dirty version, or an older WHOLE one, such as the syncing txg's) it
// makes a PARTIAL copy that holds only the bytes written (the `known`
// ranges) and waits for neither the disk nor a 128 KiB copy
// (volumes.rmw_deferred):
//
//   partial copy:  | ?? | known | ???????? | known | ?? |
//                  ?? = the newest older whole copy's bytes while one
//                       exists, else the committed record's
//   sync of its txg: read the committed record (in parallel for all the
//   txg's partial copies), fill the ?? bytes in the copy's own buffer
//   without mu_ (nobody else reads or writes them) and mark it whole under
//   mu_, then write it as usual; a copy whose
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
// of data; partial ones zero bytes in a copy, and a copy they leave all
// zeros is stored as that marker at its sync (Dirty::zeroed_as), so that
// trims covering a record in parts free it too.
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
// the partial ends. Writing it (WritePrepared or SubmitPrepared; WriteLent
// here) makes each lent buffer the record's dirty copy as it is
// (ApplyPiece: adopted), where a plain write copies its bytes into the
// copy. So a 1 MiB write into 64 KiB records is
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
// Asynchrony. Submit runs the operation on the pool's work queue and
// completes there; a request its caller waits for (caller_waits: the
// synchronous calls, the NBD server's inline requests) runs on the
// caller's thread instead, which saves two thread handoffs.
// MayWait (volume_hint.cc) tells a caller with a thread of its own which
// operations would finish in memory there (cache and dirty-copy hits,
// writes the throttle lets through), from the dirty maps, the ARC's
// presence of the records and the txg manager's throttle state.
//
// Writer waits. A write can wait in five places, all in WritePiece and
// ApplyRetrying: space admission (Reserve waits for syncs that free pool
// space), its record buffer (the ARC evicts to make room), txg assignment
// (the write throttle), mu_ (taken with TryLock first, so only a contended
// lock is timed) and the read-modify-write read of a committed record.
// Each is timed on env_.clock; a wait of kWriterWaitMinNs or more counts
// in volumes.writer_waits_<place> and writer_wait_<place>_ns. While the
// pool's I/O trace runs, ExecuteWrite also adds each write's own times
// (all of them, however short) to a W record with its span:
//
//   ExecuteWrite --WriterWaits--> WriteRange --Piece::waits--> WritePiece
//        |                                         CountWait(place, start)
//        +--(trace running)--> WriteTracer::Add(TracedWrite)
//
// Files. One class, VolumeImpl (volume_impl.h), cut by phase as ZFS cuts
// dbuf, dmu and zfetch:
//
//   volume_impl.cc   this comment; construction, the dirty maps' lookups,
//                    Flush, Submit with its dispatch by op, writer waits
//   volume_read.cc   reads: dirty copies, then HoldCommitted (handle cache,
//                    ARC, disk), partial copies laid over the committed
//                    record; Cache, BlockStatus; feeding the prefetcher
//   volume_write.cc  writes, trims, zeroing and log replay: WriteRange cuts
//                    pieces, WritePiece admits one (space, txg hold) and
//                    applies it (TryApply, ApplyWithBase, FinishPiece)
//   volume_lend.cc   lent buffers: PrepareWrite, WriteLent
//   volume_sync.cc   SyncTxg with CompletePartials, TxgCommitted's
//                    publication, and the bases given to partial copies
//   volume_hint.cc   MayWait: whether an operation would finish in memory
//   prefetcher.h     the sequential-stream detector (a class of its own)
//   block_tree.h     the committed records' tree of block pointers
//   handle_cache.h   the held hot committed records
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

#include "base/check.h"

namespace arcstore::volume {

const char* WriterWaitName(WriterWait w) {
  switch (w) {
    case WriterWait::kSpace: return "space";
    case WriterWait::kBuffer: return "buffer";
    case WriterWait::kThrottle: return "throttle";
    case WriterWait::kLock: return "lock";
    case WriterWait::kRmwRead: return "rmw_read";
  }
  return "unknown";
}

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
                                    "(PrepareWrite): made the dirty copy, no copy")) {
  for (int i = 0; i < kNumWriterWaits; i++) {
    const std::string where = WriterWaitName(static_cast<WriterWait>(i));
    writer_waits[i] = r->AddCounter("volumes", "writer_waits_" + where, stats::Unit::kOps,
                                    "writes that waited at least 10 us for " + where);
    writer_wait_ns[i] = r->AddCounter("volumes", "writer_wait_" + where + "_ns", stats::Unit::kNanoseconds,
                                      "time writes spent in those waits for " + where);
  }
}

uint64_t VolumeImpl::WaitStart() const { return env_.clock != nullptr ? env_.clock->NowNs() : 0; }

void VolumeImpl::CountWait(WriterWait where, uint64_t start_ns, WriterWaits* waits) const {
  if (env_.clock == nullptr) return;
  const uint64_t waited_ns = env_.clock->NowNs() - start_ns;
  if (waits != nullptr) waits->ns[static_cast<int>(where)] += waited_ns;
  if (waited_ns < kWriterWaitMinNs) return;
  stats_->writer_waits[static_cast<int>(where)]->Add();
  stats_->writer_wait_ns[static_cast<int>(where)]->Add(waited_ns);
}

arc::ArcHold VolumeImpl::NewBufferForWriter(WriterWaits* waits) {
  const uint64_t start_ns = WaitStart();
  arc::ArcHold buffer = NewBuffer();
  CountWait(WriterWait::kBuffer, start_ns, waits);
  return buffer;
}

void VolumeImpl::LockForWriter(WriterWaits* waits) {
  if (mu_.TryLock()) return;
  const uint64_t start_ns = WaitStart();
  mu_.Lock();
  CountWait(WriterWait::kLock, start_ns, waits);
}

Status VolumeImpl::ExecuteWrite(const VolumeRequest& req) {
  WriterWaits waits;
  // Traced only with a clock to time it by.
  const bool traced = env_.tracer != nullptr && env_.clock != nullptr && env_.tracer->active();
  WriterWaits* const mine = traced ? &waits : nullptr;
  const uint64_t start_ns = traced ? env_.clock->NowNs() : 0;
  Status s;
  io::TracedWriteOp op = io::TracedWriteOp::kWrite;
  switch (req.op) {
    case VolumeOp::kTrim:
      op = io::TracedWriteOp::kTrim;
      s = WriteRange(req.offset, req.length, nullptr, Dirty::Kind::kHole, "trim", false, nullptr,
                     mine);
      break;
    case VolumeOp::kWriteZeroes:
      op = io::TracedWriteOp::kZero;
      s = WriteZeroesNow(req.offset, req.length, req.flags, mine);
      break;
    default:
      s = WriteNow(req, mine);
      break;
  }
  if (traced) {
    io::TracedWrite w;
    w.start_ns = start_ns;
    w.done_ns = env_.clock->NowNs();
    w.op = op;
    w.offset = req.offset;
    w.bytes = req.length;
    std::copy(std::begin(waits.ns), std::end(waits.ns), std::begin(w.wait_ns));
    w.ok = s.ok();
    env_.tracer->Add(w);
  }
  return s;
}

VolumeImpl::VolumeImpl(const format::VolumeEntry& entry, const VolumeEnv& env, VolumeStats* stats)
    : entry_(entry),
      record_bytes_(entry.record_size_bytes),
      records_(entry.records()),
      env_(env),
      stats_(stats),
      tree_(TreeShape{entry.guid, entry.records(), entry.tree_depth, entry.indirect_shift},
            entry.root, env.blocks),
      prefetcher_(records_, PrefetcherOptions{}, [this](uint64_t record) { ReadAhead(record); }) {}

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

VolumeImpl::DirtyMap& VolumeImpl::MapOf(uint64_t txg) {
  auto [it, created] = dirty_.try_emplace(txg);
  // Sized like the last txg committed: growing a map rehashes every copy in
  // it under mu_, which stalls every writer of the volume meanwhile.
  if (created) it->second.reserve(records_per_txg_);
  return it->second;
}

void VolumeImpl::AddCopy(DirtyMap* mine, uint64_t txg, uint64_t record, Dirty copy) {
  if (copy.partial) partial_records_[txg].push_back(record);
  mine->emplace(record, std::move(copy));
}

bool VolumeImpl::HasDataCopy(uint64_t txg, uint64_t record) const {
  auto it = dirty_.find(txg);
  if (it == dirty_.end()) return false;
  auto f = it->second.find(record);
  return f != it->second.end() && f->second.kind == Dirty::Kind::kData;
}

Status VolumeImpl::FlushNow() {
  ARC_RETURN_IF_ERROR(CheckOpen());
  if (env_.read_only) return Status::Ok();  // nothing to make durable (a replay stays in memory)
  if (env_.log != nullptr) return env_.log->Commit();
  return env_.txg->WaitSynced(env_.txg->open_txg(), txg::SyncReason::kExplicitWait);
}

void VolumeImpl::Submit(VolumeRequest req, Completion done) {
  if (req.caller_waits || env_.work == nullptr) {
    done(Execute(req));
    return;
  }
  env_.work->Run([this, req = std::move(req), done = std::move(done)] { done(Execute(req)); });
}

Status VolumeImpl::Execute(const VolumeRequest& req) {
  switch (req.op) {
    case VolumeOp::kRead: return ReadNow(req.offset, req.out);
    case VolumeOp::kWrite:
    case VolumeOp::kTrim:
    case VolumeOp::kWriteZeroes: return ExecuteWrite(req);
    case VolumeOp::kFlush: return FlushNow();
    case VolumeOp::kCache: return CacheNow(req.offset, req.length);
    case VolumeOp::kBlockStatus: return BlockStatusNow(req.offset, req.length, req.extents);
  }
  return Status::InvalidArgument("volume " + entry_.name + ": unknown operation " +
                                 std::to_string(static_cast<int>(req.op)));
}

}  // namespace arcstore::volume
