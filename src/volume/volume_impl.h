// VolumeImpl: the engine's implementation of arcstore::Volume.
//
// A volume is a BlockTree of committed records plus, per txg not yet
// committed, the records dirtied in it. Reads see the newest version:
// the newest dirty copy, else the committed record (ARC, else disk), or
// both when the copy is partial. Writes go into the open txg's copy of each
// record; a write covering part of a record with no dirty version makes a
// partial copy (its own bytes only), completed from the committed record
// when its txg syncs. The pool's sync thread writes a txg's records
// (SyncTxg) and drops them once the txg has committed (TxgCommitted). See
// volume_impl.cc for the theory of operation.
//
// Thread-safety: the Volume methods may be called concurrently from any
// thread; SyncTxg and TxgCommitted only from the pool's sync thread.
// Submit runs the operation on the pool's work queue (or inline when it has
// none) and completes there; a request the caller waits for (the
// synchronous calls) runs on the caller's thread, which may be delayed by
// the write throttle or a disk read.
#pragma once

#include <atomic>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "arc/arc.h"
#include "base/clock.h"
#include "arcstore/volume.h"
#include "base/thread_annotations.h"
#include "base/work_queue.h"
#include "format/volume_table.h"
#include "io/io_trace.h"
#include "stats/registry.h"
#include "txg/txg_manager.h"
#include "volume/block_tree.h"
#include "volume/handle_cache.h"
#include "volume/prefetcher.h"
#include "zil/intent_log.h"

namespace arcstore::volume {

// Writes a txg's data records (allocation, compression, aggregation).
class RecordSink : public BlockSink {
 public:
  // Like WriteBlock, for a data record whose write cleans `undirty_bytes`
  // of the throttle's dirty count. `logical` (the txg's dirty copy) stays
  // valid and unchanged until the txg has committed, so the sink may write
  // from it without a copy.
  virtual Result<format::BlockPointer> WriteRecord(const format::BlockPointer& base,
                                                   std::span<const uint8_t> logical,
                                                   uint64_t undirty_bytes) = 0;
};

// The pool's space accounting, as a writer sees it (pool/space_admission.h
// implements it). Thread-safe.
class SpaceAccount {
 public:
  virtual ~SpaceAccount() = default;
  // Reserves `bytes` of new data before the writer joins a txg, waiting for
  // txg syncs that free space when it does not fit; NoSpace (naming
  // `volume`) when nothing pending could make room.
  virtual Status Reserve(uint64_t bytes, const std::string& volume) = 0;
  // Called while holding the hold of `txg`: gives back `reserved_bytes` and
  // charges `used_bytes` of new data (copies the sync of `txg` allocates) to
  // `txg` until it commits.
  virtual void Settle(uint64_t reserved_bytes, uint64_t txg, uint64_t used_bytes) = 0;
};

// The places a writer can wait (WritePiece): for the pool's space
// (admission waits for syncs that free space), for a buffer (the ARC evicts
// to make room), for the write throttle (txg assignment), for the volume's
// lock (another writer or a reader has it), and for the committed record
// a partial write needs (a read-modify-write read).
enum class WriterWait : uint8_t { kSpace, kBuffer, kThrottle, kLock, kRmwRead };
inline constexpr int kNumWriterWaits = 5;
const char* WriterWaitName(WriterWait w);  // "space", "buffer", "throttle", "lock", "rmw_read"

// A wait shorter than this is the cost of the call, not a wait: not counted.
inline constexpr uint64_t kWriterWaitMinNs = 10 * 1000;

// One write's time at each place, whatever its length (the trace's view).
struct WriterWaits {
  uint64_t ns[kNumWriterWaits] = {};
};
static_assert(kNumWriterWaits == io::kTracedWaits, "the trace's W columns are the WriterWaits");

// The pool's I/O trace, as a volume reports each application write to it
// (the trace's W records). Thread-safe.
class WriteTracer {
 public:
  virtual ~WriteTracer() = default;
  // Whether a trace runs: a hint, asked once per write.
  virtual bool active() const = 0;
  virtual void Add(const io::TracedWrite& write) = 0;
};

// What a volume needs from its pool.
struct VolumeEnv {
  txg::TxgManager* txg = nullptr;
  BlockSource* blocks = nullptr;  // verified block reads
  arc::Arc* arc = nullptr;        // caches committed records; holds dirty ones
  WorkQueue* work = nullptr;      // runs submitted operations; nullptr: inline
  HandleCache* handles = nullptr; // hot committed records, held; may be nullptr
  zil::IntentLog* log = nullptr;  // every change is appended; flush commits it
  bool prefetch = true;           // the sequential-stream prefetcher
  bool defer_partial_reads = true; // partial writes to uncached records read at sync
  stats::Registry* registry = nullptr;
  // Times a writer's waits (VolumeStats::writer_wait_ns). nullptr: waits
  // are not timed.
  Clock* clock = nullptr;
  // Where each write's span and waits go while a trace runs. nullptr: none.
  WriteTracer* tracer = nullptr;
  bool read_only = false;
  // Charges new data against the pool's space, so that a sync never runs
  // out of data space. nullptr: no accounting.
  SpaceAccount* space = nullptr;
};

// Per-pool volume counters (module "volumes").
struct VolumeStats {
  explicit VolumeStats(stats::Registry* registry);
  // Waits of at least kWriterWaitMinNs, and the time they took, by place.
  stats::Counter* writer_waits[kNumWriterWaits];
  stats::Counter* writer_wait_ns[kNumWriterWaits];
  stats::Counter* rmw_reads;        // partial copies completed from the committed record
  stats::Counter* rmw_held_bases;   // ... of them from the version held since it committed
  stats::Counter* rmw_deferred;     // partial writes that did not wait for that read
  stats::Counter* rmw_dirty;        // partial writes served by a dirty copy
  stats::Counter* record_reads;     // committed records read from disk
  stats::Counter* dirty_read_hits;  // reads served by a dirty copy
  stats::Counter* reads_uncached;   // committed reads that raced a newer version's commit
  stats::Counter* log_shared_copies;  // copies on write of a buffer the intent log held
  stats::Counter* adopted_buffers;    // lent buffers (PrepareWrite) made copies, no copy
};

class VolumeImpl final : public Volume {
 public:
  VolumeImpl(const format::VolumeEntry& entry, const VolumeEnv& env, VolumeStats* stats);
  ~VolumeImpl() override;

  VolumeInfo info() const override;
  // Runs `req` on the work queue, or on the caller's thread when the
  // caller waits for it or the volume has no work queue.
  void Submit(VolumeRequest req, Completion done) override;
  // Lends a new record buffer for each whole record of the range (heap
  // memory for the partial ends); writing them adopts each buffer as the
  // record's dirty copy instead of copying it (volumes.adopted_buffers).
  std::unique_ptr<PreparedWrite> PrepareWrite(uint64_t offset, uint64_t length) override;
  // From the dirty copies, the ARC's presence of the records and the txg
  // manager's throttle state (volume_hint.cc).
  bool MayWait(VolumeOp op, uint64_t offset, uint64_t length) override;
  // The pool's intent log leaves the early batches this thread's changes
  // make due to it (IntentLog::RegisterEarlyCaller), written in
  // BeforeCallerWaits (IntentLog::WriteEarly).
  void SetCallerThread(bool on) override;
  void BeforeCallerWaits() override;

  // ---- Pool side --------------------------------------------------------
  // Applies an intent log record at open as an ordinary (unlogged) change.
  // On a read-only pool the change stays in memory: reads see it, nothing
  // writes it.
  Status ApplyLogRecord(const format::LogRecord& r);
  // Writes the records dirtied in `txg` and this volume's dirty indirect
  // blocks; updates `entry` (its root) for the volume table.
  Status SyncTxg(uint64_t txg, RecordSink* sink, format::VolumeEntry* entry);
  // `txg` is durable: its dirty copies are no longer needed.
  void TxgCommitted(uint64_t txg);
  // Frees every block of the volume in `txg` (the volume was destroyed).
  Status FreeAll(BlockSink* sink);
  // Operations from now on fail with Aborted.
  void Close();
  // The volume is being destroyed: operations fail with Aborted, but the
  // dirty copies stay for the syncs of the txgs before the destroy (a sync
  // may be writing them right now); TxgCommitted drops them without
  // caching them.
  void MarkDestroyed();
  BlockTree& tree() { return tree_; }
  // Tests only: `hook(record, point)` runs on a reader's thread of a
  // committed record just before its tree read and again between the tree
  // read and its ARC lookup (a test pauses a reader there). Set it before
  // the reads it is meant for.
  enum class TreeReadPoint { kBeforeTreeRead, kBeforeLookup };
  using TreeReadHook = std::function<void(uint64_t record, TreeReadPoint point)>;
  void SetTreeReadHookForTest(TreeReadHook hook) {
    MutexLock l(&mu_);
    tree_read_hook_ = std::move(hook);
    has_tree_read_hook_.store(static_cast<bool>(tree_read_hook_), std::memory_order_release);
  }
  // Tests only: `hook(record)` runs on the sync thread as TxgCommitted
  // publishes each committed record, without mu_ (a test checks that
  // writers and readers go on meanwhile). Set it before the commit.
  void SetPublishHookForTest(std::function<void(uint64_t record)> hook) {
    MutexLock l(&mu_);
    publish_hook_ = std::move(hook);
  }
  // Tests only: `hook(record)` runs on a thread of a txg's sync when it has
  // filled the unknown bytes of a partial `record`, before it takes mu_ to
  // mark the copy whole (a test checks that writers and readers go on
  // meanwhile).
  // Set it before the sync.
  void SetCompleteHookForTest(std::function<void(uint64_t record)> hook) {
    MutexLock l(&mu_);
    complete_hook_ = std::move(hook);
  }
  const format::VolumeEntry& entry() const { return entry_; }

 private:
  // A record's version in one txg.
  struct Dirty {
    enum class Kind : uint8_t { kData, kHole, kZero } kind = Kind::kData;
    arc::ArcHold buf;  // kData: an anon ARC buffer of record_size bytes
    // A partial copy (kData only): only the bytes of `known` ([begin, end),
    // sorted, disjoint, not touching) are set in `buf`; every other byte is
    // the committed record's (Complete() fills them in).
    bool partial = false;
    std::vector<std::pair<uint32_t, uint32_t>> known;
    // A partial copy whose older whole copy committed while it waited: that
    // version, now the cached committed record, held (so the ARC cannot
    // evict it) until this copy is completed from it.
    arc::ArcHold base;
    // A whole-record write was logged by reference (IntentLog::AppendHeld):
    // the log may still hold `buf`, which must then not change. The next
    // piece writes into a new buffer instead (LogShares).
    bool logged = false;
    // kHole or kZero once a trim or zeroing (not NO_HOLE) zeroed part of
    // this copy: if every byte is zero at its sync, the record is stored as
    // that marker instead of data (SyncTxg). kData otherwise.
    Kind zeroed_as = Kind::kData;
    // kData: where SyncTxg stored the record (its block's place and birth),
    // which TxgCommitted publishes with it so that the ARC can offer it to
    // a cache device when it evicts it. Set by the syncing thread without
    // mu_ (the txg is quiesced) and read only by TxgCommitted after it.
    arc::ArcOrigin stored;
  };
  using DirtyMap = std::unordered_map<uint64_t, Dirty>;

  // One record's part of a write, trim or zeroing.
  struct Piece {
    uint64_t in_record = 0, n = 0;
    const uint8_t* data = nullptr;  // nullptr: zeros
    Dirty::Kind full_kind = Dirty::Kind::kData;  // what a whole record becomes
    bool whole = false;
    // A lent buffer (PrepareWrite) holding exactly this whole record's
    // bytes (`data` points into it): the copy adopts it.
    arc::ArcHold* lent = nullptr;
    WriterWaits* waits = nullptr;  // the traced write's waits, or nullptr
  };
  class RecordPreparedWrite;

  // Attempts of one operation on a record that keeps changing under it (a
  // txg committing or syncing it meanwhile) before it fails.
  static constexpr int kMaxAttempts = 32;

  // Writer waits: a start time (0 without a clock) and its accounting,
  // in the stats and in `waits` (the traced write's own), when given.
  uint64_t WaitStart() const;
  void CountWait(WriterWait where, uint64_t start_ns, WriterWaits* waits) const;
  // NewBuffer for a writer, counting the wait for the ARC's eviction.
  arc::ArcHold NewBufferForWriter(WriterWaits* waits);
  // Takes mu_ for a writer, counting the wait when another thread had it.
  void LockForWriter(WriterWaits* waits) ARC_ACQUIRE(mu_);
  // Runs a write, trim or zeroing op, and reports it to the trace when one
  // runs (env_.tracer).
  Status ExecuteWrite(const VolumeRequest& req);
  // Submit's work, on the thread that runs it: one function per op.
  Status Execute(const VolumeRequest& req);
  Status ReadNow(uint64_t offset, std::span<uint8_t> out);
  Status WriteNow(const VolumeRequest& req, WriterWaits* waits);
  Status FlushNow();
  Status WriteZeroesNow(uint64_t offset, uint64_t length, uint32_t zero_flags,
                        WriterWaits* waits);
  Status CacheNow(uint64_t offset, uint64_t length);
  Status BlockStatusNow(uint64_t offset, uint64_t length, std::vector<Extent>* extents);
  // MayWait's two halves (volume_hint.cc), for a range of at most
  // kHintMaxRecords records [first, last].
  bool ReadMayWait(uint64_t offset, uint64_t length, uint64_t first, uint64_t last);
  bool ChangeMayWait(uint64_t offset, uint64_t length, uint64_t first, uint64_t last);
  // `replay`: a logged change applied at open (allowed on a read-only pool,
  // where it stays in memory and takes no throttle: nothing will sync it).
  // `prepared`: the bytes are its pieces (one per record), not `data`.
  Status WriteRange(uint64_t offset, uint64_t length, const uint8_t* data, Dirty::Kind full_kind,
                    const char* op, bool replay = false,
                    RecordPreparedWrite* prepared = nullptr, WriterWaits* waits = nullptr);
  Status WritePiece(uint64_t record, const Piece& piece, bool replay);
  // Writes a PreparedWrite this volume lent (then FUA as Write does).
  Status WriteLent(RecordPreparedWrite* prepared, uint32_t write_flags, WriterWaits* waits);
  // Applies `piece` to a record copy; `spare` is an anon buffer to use
  // when the copy has none (taken only if needed), or the piece's lent
  // buffer (always taken: it becomes the copy).
  void ApplyPiece(Dirty& d, const Piece& piece, arc::ArcHold* spare) const;
  // Whether the intent log still holds `d`'s buffer (the next piece then
  // takes a new one: copy on write).
  static bool LogShares(const Dirty& d) { return d.logged && d.buf.shared(); }
  // Whether applying `piece` to `d` takes a new buffer (`spare`).
  static bool NeedsBuffer(const Dirty& d, const Piece& piece);
  enum class Applied { kDone, kNeedBuffer, kNeedBase };
  // Marks [begin, end) of a partial copy known (no longer partial once
  // every byte is).
  void AddKnown(Dirty& d, uint64_t begin, uint64_t end) const;
  // Fills the unknown bytes of partial copy `d` from `base`, a whole
  // record's bytes (nullptr: zeros); `d` is whole after.
  void Complete(Dirty& d, const uint8_t* base) const;
  // Complete's bytes alone: writes every byte of `d`'s buffer outside its
  // known ranges from `base` (nullptr: zeros) and leaves `d` partial.
  void FillUnknown(Dirty& d, const uint8_t* base) const;
  // Complete's bookkeeping alone: `d`, whose bytes are all set, is whole
  // (no known ranges, no base held).
  static void MarkWhole(Dirty& d);
  static const uint8_t* BytesOf(const arc::ArcHold& h) { return h ? h.data().data() : nullptr; }
  static const uint8_t* BytesOf(const Dirty& d) {
    return d.kind == Dirty::Kind::kData ? d.buf.data().data() : nullptr;
  }
  // The newest whole (not partial) copy of `record` in a txg before `txg`
  // (nullptr: none). Its bytes are what a partial copy of `txg` lacks.
  const Dirty* WholeCopyBefore(uint64_t record, uint64_t txg) ARC_REQUIRES(mu_);
  // Copies bytes [in_record, in_record + n) of `d` to `dst`; false when
  // `d` is partial and some of them are unknown.
  bool CopyKnown(const Dirty& d, uint64_t in_record, uint64_t n, uint8_t* dst) const;
  // A read's bytes from the dirty copies: the newest copy's when it knows
  // them all, else the older whole copy's under its known bytes when there
  // is one (*served). Returns the newest copy (nullptr: none).
  const Dirty* CopyFromDirty(uint64_t record, uint64_t in_record, uint64_t n, uint8_t* dst,
                             bool* served) ARC_REQUIRES(mu_);
  // Copies what a newer copy made from `d` (kData) takes of it to `dst` (a
  // record's buffer): every byte of a whole copy, only the known ranges of
  // a partial one (the rest of `dst` is unknown to the new copy too).
  void CopyToNewer(const Dirty& d, uint8_t* dst) const;
  // Copies the known bytes of `d` within [in_record, in_record + n) to
  // their places in `dst`.
  void Overlay(const Dirty& d, uint64_t in_record, uint64_t n, uint8_t* dst) const;
  // Copies bytes [in_record, in_record + n) of record `record` (its newest
  // version) to `dst`.
  Status ReadRecordPart(uint64_t record, uint64_t in_record, uint64_t n, uint8_t* dst);
  // Completes every partial copy of txg `txg` before its sync writes it:
  // those over a committed record held or cached on the calling thread, the
  // others' committed records read in parallel (up to kBaseReaders).
  Status CompletePartials(const std::vector<std::pair<uint64_t, Dirty*>>& all);
  // One of them: fills the bytes partial copy `d` of `record` does not
  // know in its own buffer without mu_ (from its held base, else the
  // committed record read now), runs `hook`, and marks it whole under mu_.
  Status CompletePartial(uint64_t record, Dirty* d, const std::function<void(uint64_t)>& hook);
  // Applies `piece` to txg's copy of `record`, making the copy from an
  // older dirty version when there is one. kNeedBase: only the committed
  // record can be the base; kNeedBuffer: `spare` was needed and empty.
  Applied TryApply(uint64_t txg, uint64_t record, const Piece& piece, arc::ArcHold* spare)
      ARC_REQUIRES(mu_);
  // TryApply after kNeedBase, with the committed record read: completes
  // txg's copy (or makes a whole one) from `base` and applies `piece`.
  Applied ApplyWithBase(uint64_t txg, uint64_t record, const Piece& piece, arc::ArcHold* spare,
                        const arc::ArcHold& base) ARC_REQUIRES(mu_);
  // One writer's piece in its txg, as WritePiece's attempts share it.
  struct PieceWrite {
    uint64_t txg = 0, record = 0;
    const Piece* piece = nullptr;
    arc::ArcHold* spare = nullptr;  // a buffer for a new copy (may be empty)
    bool applied = false;           // to the txg's copy; newer ones may lack it
    uint64_t new_copy_bytes = 0;    // data the txg's sync allocates for this piece
  };
  // What a writer saw before reading the committed record without mu_.
  struct TreeSeen {
    uint64_t commits = 0, changes = 0;  // commits_, tree_changes_
  };
  // WritePiece once it holds its txg: applies the piece until done, reading
  // the committed record when the copy needs it and a buffer when it is
  // short of one; Internal after kMaxAttempts.
  Status ApplyRetrying(PieceWrite* w);
  // One attempt under mu_: TryApply (then ApplyWithBase with `base`, the
  // committed record read since `seen`, unless a commit or a tree change
  // came since), then FinishPiece. kDone when the piece is applied to every
  // copy and logged.
  Applied ApplyAndFinish(PieceWrite* w, const arc::ArcHold* base, const TreeSeen& seen)
      ARC_REQUIRES(mu_);
  // After `piece` applied to txg's copy: applies it to newer txgs' copies
  // of the record and appends it to the intent log. False when a newer
  // copy needs `spare` and it is empty (call again with one).
  bool FinishPiece(uint64_t txg, uint64_t record, const Piece& piece, arc::ArcHold* spare)
      ARC_REQUIRES(mu_);
  // Whether txg's version of `record` is a data copy (its sync allocates).
  bool HasDataCopy(uint64_t txg, uint64_t record) const ARC_REQUIRES(mu_);
  // TxgCommitted(txg): the next txg's partial copies get the committed
  // version of their record as their base.
  void GiveBases(uint64_t txg) ARC_REQUIRES(mu_);
  // Txg's map of copies, made (reserved for records_per_txg_) if new.
  DirtyMap& MapOf(uint64_t txg) ARC_REQUIRES(mu_);
  // Adds the copy of `record` to txg's map `mine` (listing it in
  // partial_records_ if partial).
  void AddCopy(DirtyMap* mine, uint64_t txg, uint64_t record, Dirty copy) ARC_REQUIRES(mu_);
  arc::ArcHold NewBuffer();
  arc::ArcKey KeyOf(uint64_t record) const { return arc::ArcKey{entry_.guid, record, 0}; }
  // The committed version of `record`: a hold on its cached data, or an
  // empty hold for a hole (zeros). `access` says demand or prefetch.
  Result<arc::ArcHold> HoldCommitted(uint64_t record, arc::AccessKind access);
  // Ends HoldCommitted's read of `bp`, which the tree gave after
  // `commits_seen` commits: caches it (*cached), unless a txg committed a
  // newer version of the record meanwhile (then only the caller gets it).
  arc::ArcHold FinishRecordRead(uint64_t record, const format::BlockPointer& bp,
                                uint64_t commits_seen, arc::FillToken fill, bool* cached);
  // Tells the prefetcher of a demand read of a committed record (when the
  // pool prefetches and has a work queue).
  void NoteSequential(uint64_t record);
  // Queues a prefetch read of committed record `record` on the work queue
  // (the prefetcher's ReadAhead).
  void ReadAhead(uint64_t record);
  // The newest dirty version of `record` (nullptr: none), and its txg.
  const Dirty* NewestDirty(uint64_t record, uint64_t* txg = nullptr) ARC_REQUIRES(mu_);
  Status CheckOpen() const;

  format::VolumeEntry entry_;  // root updated by the sync thread only
  const uint32_t record_bytes_;
  const uint64_t records_;
  const VolumeEnv env_;
  VolumeStats* const stats_;
  BlockTree tree_;
  std::atomic<bool> closed_{false};

  Mutex mu_;
  std::map<uint64_t, DirtyMap> dirty_ ARC_GUARDED_BY(mu_);  // txg -> records
  // Records given a partial copy in each txg (some may be whole again, or
  // gone): GiveBases looks at these only, not at a whole txg's copies.
  std::map<uint64_t, std::vector<uint64_t>> partial_records_ ARC_GUARDED_BY(mu_);
  // Copies in the last txg committed: a new txg's map is reserved for as
  // many (at most kMaxReservedCopies), so that it seldom grows.
  static constexpr size_t kMaxReservedCopies = 1 << 20;
  size_t records_per_txg_ ARC_GUARDED_BY(mu_) = 0;
  // TxgCommitted calls (a base read may be stale). Changed under mu_ only;
  // atomic so that HoldCommitted notes it before its tree read without mu_.
  std::atomic<uint64_t> commits_{0};
  // Syncs that began changing the tree (after completing their partial
  // copies): a committed record read meanwhile may be a block still being
  // written, so a base read across one is read again.
  uint64_t tree_changes_ ARC_GUARDED_BY(mu_) = 0;
  // The txg whose sync is changing the tree (UINT64_MAX: none): its blocks
  // may still be in flight, so HoldCommitted refuses to read them.
  std::atomic<uint64_t> unsettled_txg_{UINT64_MAX};
  TreeReadHook tree_read_hook_ ARC_GUARDED_BY(mu_);
  std::atomic<bool> has_tree_read_hook_{false};
  std::function<void(uint64_t)> publish_hook_ ARC_GUARDED_BY(mu_);
  std::function<void(uint64_t)> complete_hook_ ARC_GUARDED_BY(mu_);
  Prefetcher prefetcher_;  // sequential-stream detection (prefetcher.h)
};

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

}  // namespace arcstore::volume
