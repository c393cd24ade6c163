// IntentLog: durable FLUSH and FUA without a txg sync each.
//
// Volumes Append() every change (write, trim, zeroing; one record of one
// volume each) in the order they apply it; the log keeps a copy of a
// write's bytes, or for a whole record a hold on the volume's dirty buffer
// (AppendHeld), until the change is in a log block or its txg commits.
// Commit() makes every change appended so far durable by writing the ones
// not yet committed to log blocks in the pool's log arena and flushing the
// device once. See intent_log.cc for the theory of operation,
// format/intent_log.h for the blocks and their chaining.
//
// Thread-safety: Append, Commit and the accessors from any thread; Append
// may be called with a volume's lock held (the log's lock is taken after
// it). HeaderFor and TxgCommitted from the pool's sync thread. The log owns
// one thread, its writer (IntentLogOptions::writer_thread), which writes
// batches for callers queued behind another; StopWriter (or destruction)
// joins it.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "arc/arc.h"
#include "arcstore/status.h"
#include "base/clock.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "format/intent_log.h"
#include "format/uberblock.h"
#include "io/aligned_buffer.h"
#include "io/buffer_cache.h"
#include "io/device.h"
#include "stats/registry.h"
#include "zil/copy_arena.h"

namespace arcstore::zil {

struct IntentLogOptions {
  bool enabled = true;                      // false: Commit = a txg sync
  uint32_t max_block_bytes = 1u << 20;      // a commit's blocks, each
  // Changes kept (copies or held buffers) not yet logged; a pool sets
  // PendingBytesFor(its dirty limit).
  uint64_t max_pending_bytes = 256u << 20;
  // Batches written and flushed at once. One: callers arriving while a
  // batch is at the device form the next batch, which then costs one write
  // and one flush for all of them. More than one rarely pays: a device's
  // flushes do not overlap well, so batches in flight together mostly
  // split the callers that one batch would serve.
  uint32_t max_inflight_commits = 1;
  // A log writer thread takes over while callers queue up: when a batch
  // finishes and callers are waiting for the next, the writer writes it
  // at once instead of waking one of them to do it (a wake-up per batch,
  // and a herd). A caller alone still writes its own batch. false: callers
  // always write the batches themselves.
  bool writer_thread = true;
  // Gathering: when the writer is about to start a batch (or go idle)
  // while fewer changes were appended since the last batch finished than
  // it released callers (its records, at most the callers then in Commit:
  // they are still writing their next change),
  // it waits for them for up to this share of the last batch's device
  // time, at most gather_max_ns, so that one write and flush serves them
  // all. A caller alone is never kept waiting (its batch released one
  // record). 0: never. Up to one batch's device time: a caller that misses
  // the batch waits at least that long for the next one anyway, and NBD
  // clients, which come back a WRITE and a FLUSH round trip later, need
  // the whole of it to make the batch.
  uint32_t gather_percent = 100;
  uint64_t gather_max_ns = 1000 * 1000;
  // Every time the log has placed this share of the arena (percent), it
  // asks for a txg sync (request_sync): the arena keeps the blocks of up to
  // five txgs, so flush-heavy work that outruns the txg timeout would
  // otherwise fill it and fall back to a synchronous txg sync. 0: never.
  uint32_t sync_kick_percent = 15;
  // Spilling: when the copies of changes not yet logged (partial-record
  // writes; whole records are held, not copied) reach this share of
  // max_pending_bytes and nobody is committing, the writer thread writes
  // them to log blocks, so that they are not dropped at the cap and the
  // next commit writes only what came after. A spill uses at most half the
  // arena (blocks kept for replay and the spill together) and never asks
  // for a txg sync; past that the copies run into the cap as without it.
  // 0: never (also without a writer thread).
  uint32_t spill_percent = 25;
  // Early writes: while commits come often (the last one began at most
  // this long ago), a change appended with nobody committing and nothing
  // in flight wakes the writer thread, which writes every pending change
  // as a batch at once, durable when it completes. A FLUSH that follows
  // its WRITE by a client's round trip then finds its change durable (or
  // waits for the batch at the device) instead of starting the write and
  // the device flush itself. The window bounds the extra log writes of
  // work that flushes seldom (its changes would mostly be dropped when
  // their txg commits). Early batches count towards sync_kick_percent as
  // commits do; like a spill, one starts only while the arena's kept
  // blocks and the changes together fit in half of it. 0: never (also
  // without a writer thread).
  uint64_t early_write_window_ns = 5 * 1000 * 1000;
  // A commit whose blocks go out as one write (they lie one after another
  // in the arena) writes them with FUA (durable at completion) instead of
  // a write and a device flush; false: always flush.
  bool use_fua = true;
  // Makes the memory a busy log keeps (its kept copy chunks, a MiB per MiB
  // of max_pending_bytes, and its kSpareBuffers block buffers) when the
  // log starts, each page written once, instead of at the first changes
  // that need it: where a page's first touch is costly (a hypervisor trip
  // on some virtual machines) a new log otherwise copies its first burst
  // of changes at the page-fault rate. A pool sets it with
  // arc_pretouch_bytes.
  bool pretouch = false;
  // Test only: acknowledge a commit without its device flush, so that the
  // crash harness can show it notices.
  bool unsafe_skip_flush = false;

  Status Validate() const;

  // Copies of changes not yet logged: enough for flush-heavy work (a
  // commit empties them); without flushes they are dropped at the cap and
  // the next flush syncs a txg instead. A sixteenth of the effective dirty
  // limit (min(dirty_max, c_max / 2)), 1 to 64 MiB: with a capped ARC the
  // copies are memory outside it, so they stay a small share of its bound.
  static uint64_t PendingBytesFor(uint64_t dirty_limit_bytes) {
    return std::clamp<uint64_t>(dirty_limit_bytes / 16, 1u << 20, 64u << 20);
  }
};

// What the log needs from its pool.
struct IntentLogEnv {
  io::Device* device = nullptr;
  uint32_t unit_bytes = 4096;
  Clock* clock = nullptr;
  stats::Registry* registry = nullptr;
  // Makes every change appended so far durable by a txg sync: the fallback
  // when the log cannot take a commit (disabled, no arena, arena full,
  // copies dropped for memory).
  std::function<Status()> sync_all;
  // Asks for a txg sync soon and returns at once (sync_kick_percent).
  std::function<void()> request_sync;
  // Called once when a log write or flush fails: the pool stops taking
  // changes (its device is failing; nothing unflushed may be trusted).
  std::function<void(const Status&)> on_failure;
};

// Where the log stands when the pool opens: the arena (if any) and the
// blocks already in it that must be kept (those replay read).
struct LogStart {
  format::IntentLogHeader header;  // from the uberblock opened
  struct Block {
    uint64_t offset = 0, bytes = 0, seq = 0;
  };
  std::vector<Block> chain;        // the valid blocks replay found, in order
  uint64_t next_offset = 0;        // where the next block goes
  uint64_t next_seq = 1;           // of the next block
  uint64_t last_record_seq = 0;    // record seqs continue after it
};

// The log as read at open: its valid chain and the records in it.
struct LogReplay {
  LogStart start;
  std::vector<format::LogRecord> records;  // every record of the chain, in order
  uint64_t last_seq = 0;                   // of the last record read (0: none)
  std::string end;                         // why the chain ends there
};

// Reads the chain that `header` starts (nothing when it has no arena).
Result<LogReplay> ReadLog(io::Device* device, uint32_t unit_bytes,
                          const format::IntentLogHeader& header);

// Counters of the log (module "zil").
struct IntentLogStats {
  explicit IntentLogStats(stats::Registry* registry);
  stats::Counter* commit_requests;  // Commit calls
  stats::Counter* commits;          // batches written with one flush
  stats::Counter* records;          // records written to log blocks
  stats::Counter* bytes;            // log block bytes written
  stats::Counter* blocks;
  stats::Counter* flushes;          // device flushes issued by the log
  stats::Counter* fua_writes;       // commits written as one FUA write, no flush
  stats::Counter* fallback_syncs;   // commits served by a txg sync
  stats::Counter* dropped_copies;   // changes dropped for memory (a later commit syncs)
  stats::Counter* sync_kicks;       // txg syncs asked for by sync_kick_percent
  stats::Counter* replayed_records; // applied at open
  stats::Counter* writer_batches;   // batches the log writer thread wrote
  stats::Counter* buffers_allocated;  // block buffers allocated, not reused
  stats::Counter* copy_chunks_made;   // copy chunks made for a change, not reused
  stats::Counter* gathers;          // times the writer waited for callers to append (Gather)
  stats::Counter* spills;           // spills asked of the writer (spill_percent)
  stats::Counter* early_writes;     // early batches asked of the writer (early_write_window_ns)
  stats::Histogram* batch_records;  // records per batch
  stats::Histogram* commit_latency_ns;
  stats::Gauge* copy_bytes;         // memory of the copies' chunks, in use and kept
  stats::Gauge* pretouched_bytes;   // memory made and written once at start (pretouch)
  stats::Gauge* pending_bytes;      // changes kept (copies or held buffers) not yet logged
  stats::Gauge* arena_used_bytes;
};

class IntentLog {
 public:
  IntentLog(const IntentLogOptions& options, const IntentLogEnv& env, const LogStart& start);
  ~IntentLog();
  IntentLog(const IntentLog&) = delete;
  IntentLog& operator=(const IntentLog&) = delete;

  // Ends the log writer thread once its batch in flight is done; commits
  // still work, each written by a caller. The pool calls it when it closes;
  // idempotent.
  void StopWriter();

  // ---- Volumes --------------------------------------------------------
  // Records a change that txg `txg` holds; `data` (writes only) is copied.
  // Returns its sequence number. Ignored (returns 0) while suppressed.
  uint64_t Append(format::LogRecordType type, uint64_t volume_guid, uint64_t txg,
                  uint64_t offset, uint64_t length, const uint8_t* data);
  // A write of `data`'s first `length` bytes, by reference: the log keeps
  // the hold (no copy) until the write is in a log block or txg `txg`
  // commits. The caller must not change the buffer while the log holds it
  // (it writes into a new buffer instead, see ArcHold::shared). The log
  // lets go of every hold of txg T before TxgCommitted(T) returns.
  uint64_t AppendHeld(uint64_t volume_guid, uint64_t txg, uint64_t offset, uint64_t length,
                      arc::ArcHold data);
  // Every change appended before the call is durable when this returns OK.
  Status Commit();
  // A hint for a caller deciding where to run a Commit: whether it would
  // wait for a txg sync (the log disabled, no arena yet, or change copies
  // dropped) rather than write a log block. False when nothing appended
  // waits to be made durable. Stale as soon as it returns.
  bool CommitWouldSync();
  // Callers that write their own early batches: a thread that calls
  // WriteEarly whenever it is about to wait for its client (the NBD
  // server's connection reader, before it sleeps for the next request)
  // registers itself. An early batch that a change of a registered thread
  // makes due is then left for it rather than waking the writer thread for
  // it (early_left_): the batch costs no wake-up and no context switch, and
  // the client's FLUSH, a round trip later, finds it durable or at the
  // device. Register and unregister on the thread itself; at most
  // kMaxEarlyCallers at once (the writer serves any others).
  void RegisterEarlyCaller();
  void UnregisterEarlyCaller();
  // Writes the early batch a registered caller's change left, on this
  // thread, if it is still due (nobody committed or started a batch since);
  // returns at once otherwise. A failed batch fails the log.
  void WriteEarly();
  // While suppressed, Append records nothing (replay applies the log's own
  // records) and headers keep naming the chain being replayed.
  void SetReplaying(bool replaying);
  // Replay is done (`records` applied) and every replayed change is in txg
  // `txg` or older.
  void ReplayApplied(uint64_t txg, uint64_t records);

  // ---- Sync thread ----------------------------------------------------
  bool has_arena();
  // Gives the log its arena (the pool allocated it in the txg being synced).
  void SetArena(uint64_t offset_bytes, uint64_t bytes);
  // The header for the uberblock of `txg`: replay of that pool state
  // starts at the first block holding a change of a later txg.
  format::IntentLogHeader HeaderFor(uint64_t txg);
  // `txg` is durable with `header`: drop its changes (and wait until no
  // batch is still copying a held one); reuse space that no uberblock of
  // the newest three txgs replays from.
  void TxgCommitted(uint64_t txg, const format::IntentLogHeader& header);

  uint64_t last_seq();
  uint64_t arena_used_bytes();

 private:
  // A change appended and not yet in a block: a write's bytes are in
  // `copy` (Append), or in `held` (AppendHeld); rec.data stays empty.
  struct Pending {
    format::LogRecord rec;
    arc::ArcHold held;
    CopyArena::Ref copy;
    std::span<const uint8_t> data() const;
  };
  struct Block {
    uint64_t offset = 0, bytes = 0, seq = 0, guid = 0;
    uint64_t max_txg = 0;  // newest txg of its records
    uint64_t batch = 0;    // the batch writing it (0: written by an earlier life)
  };
  // A block of a batch, placed in the arena, with the changes it holds.
  struct PlannedBlock {
    Block block;
    std::vector<Pending> records;
  };
  // A batch's blocks encoded, and what its release counts.
  struct EncodedBatch {
    std::vector<io::AlignedBuffer> buffers;  // per block, from buffers_
    std::vector<Block> targets;              // where each goes
    uint64_t records = 0, bytes = 0;
    uint64_t io_ns = 0;  // device time of the writes and the flush
  };
  // Why a batch is written: a caller committing, or the writer on its own
  // with nobody waiting (a spill for memory, an early write for latency).
  enum class BatchKind : uint8_t { kCommit, kSpill, kEarly };
  // Writes the batch taken by the committer. Called and returns with mu_
  // held; drops it for the I/O. Its steps: take the pending changes, plan
  // the blocks (under mu_), encode them and write them (without it), and
  // release the batch (under mu_ again). A batch nobody asked for (spill,
  // early write) that the arena cannot place drops its copies (the next
  // commit syncs a txg) instead of syncing one; a spill counts towards no
  // sync kick.
  Status CommitBatch(BatchKind kind = BatchKind::kCommit) ARC_REQUIRES(mu_);
  // Takes every pending change of a txg not yet committed.
  std::deque<Pending> TakePending() ARC_REQUIRES(mu_);
  // Packs `batch` (batch `id`) into blocks and places each in the arena;
  // false, with nothing placed, when the arena is full (the changes left
  // in `batch` and `planned` are for the fallback to drop).
  bool PlanBlocks(uint64_t id, std::deque<Pending>* batch, std::vector<PlannedBlock>* planned)
      ARC_REQUIRES(mu_);
  // Counts the planned bytes towards sync_kick_percent: whether to ask
  // for a txg sync now.
  bool NoteKick(const std::vector<PlannedBlock>& planned) ARC_REQUIRES(mu_);
  // Encodes the planned blocks and lets go of their changes (and of
  // encoding_); buffers taken are in `out` even on error.
  Status EncodeBatch(uint64_t guid, std::vector<PlannedBlock>* planned, EncodedBatch* out)
      ARC_EXCLUDES(mu_);
  // Writes the encoded blocks into `arena`, contiguous ones as one write,
  // and makes them durable (FUA when that is one write, else a flush).
  Status WriteBatch(const format::IntentLogHeader& arena, EncodedBatch* encoded)
      ARC_EXCLUDES(mu_);
  // The batch's writes are over with `s`: fails the log, or counts the
  // batch; then durability advances (BatchDone).
  Status ReleaseBatch(uint64_t id, const Status& s, const EncodedBatch& encoded, BatchKind kind)
      ARC_REQUIRES(mu_);
  Status Fallback(uint64_t id, uint64_t batch_last) ARC_REQUIRES(mu_);
  // Whether a batch must fall back to a txg sync before it is planned: the
  // log disabled, no arena, or copies dropped that no committed txg holds.
  bool MustFallBack() const ARC_REQUIRES(mu_);
  // The writer thread: writes batches back to back while callers wait,
  // and the batches nobody asked for (spills, early writes).
  void WriterLoop();
  // Whether the writer should write the pending changes now with nobody
  // committing, and why (*kind: kSpill for the copies past spill_percent,
  // else kEarly inside early_write_window_ns of the last commit); the
  // arena must have room for them.
  bool UnaskedBatchDue(BatchKind* kind) const ARC_REQUIRES(mu_);
  // Wakes the writer for such a batch when one is due and it is not
  // already asked or serving callers; `appender_writes_early`: the caller
  // is a registered thread appending, which writes an early batch itself
  // (WriteEarly), so one is only noted (early_left_).
  void AskWriterIfDue(bool appender_writes_early = false) ARC_REQUIRES(mu_);
  // Whether the calling thread is a registered early caller.
  bool IsEarlyCaller() const ARC_REQUIRES(mu_);
  // A batch nobody asked for that found no room: its `changes` (`max_txg`
  // the newest txg among them) are dropped and counted as at the cap, and
  // the batch is forgotten without advancing durability.
  void AbandonUnasked(uint64_t id, uint64_t taken_before, uint64_t max_txg, uint64_t changes)
      ARC_REQUIRES(mu_);
  // A caller's batch is done and callers wait for another: the writer
  // takes over (or, without one, a waiting caller is woken to write it).
  void HandOff() ARC_REQUIRES(mu_);
  // The writer waits for the callers the last batch released to append
  // again (gather_percent).
  void Gather() ARC_REQUIRES(mu_);
  // Where a caller waiting for change `target` to be durable sleeps: the
  // slot of the batch that holds it, or of the next batch to start.
  CondVar& WaitSlot(uint64_t target) ARC_REQUIRES(mu_);
  // The log failed or the writer stopped: everyone re-checks.
  void WakeAll() ARC_REQUIRES(mu_);
  // Batch `id` finished (written and flushed, or failed): durability
  // advances through the finished prefix of the batches in flight.
  void BatchDone(uint64_t id) ARC_REQUIRES(mu_);
  // Whether batch `id` finished (its blocks' writes are over).
  bool BatchFinished(uint64_t id) ARC_REQUIRES(mu_);
  // Where a block of `bytes` can go, or UINT64_MAX when the arena is full.
  uint64_t Place(uint64_t bytes) ARC_REQUIRES(mu_);
  // `uncopied`: a write's bytes, when Append did not copy them (it saw
  // the log overflowed); copied here if the overflow has ended.
  uint64_t AppendPending(Pending p, const uint8_t* uncopied);
  // The copies' chunks for a log whose copies are capped at
  // `max_pending_bytes`: room for the cap twice over (copies of changes
  // still pending pin the chunks they share with changes gone), the cap's
  // worth kept for reuse.
  static CopyArena::Options CopyArenaFor(uint64_t max_pending_bytes);
  void UpdateGauges() ARC_REQUIRES(mu_);

  const IntentLogOptions options_;
  const IntentLogEnv env_;
  IntentLogStats stats_;

  Mutex mu_;
  // Waiters sleep on the slot of the batch they wait for (batch id modulo
  // kWaitSlots), so a batch's end wakes its own callers, not the callers
  // of the next one.
  static constexpr size_t kWaitSlots = 4;
  std::array<CondVar, kWaitSlots> done_cv_;
  CondVar writer_cv_;  // the writer thread waits here for work
  // Batches copying their changes into blocks (outside mu_): held buffers
  // are still referenced until it is back to 0 (TxgCommitted waits).
  uint32_t encoding_ ARC_GUARDED_BY(mu_) = 0;
  CondVar encoded_cv_;
  format::IntentLogHeader arena_ ARC_GUARDED_BY(mu_);  // arena offset/bytes; guid_ below
  uint64_t guid_ ARC_GUARDED_BY(mu_);                  // of blocks written by this open
  CopyArena copies_;  // Append's copies (before pending_: it outlives them)
  std::deque<Pending> pending_ ARC_GUARDED_BY(mu_);        // appended, not yet in a block
  uint64_t pending_bytes_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t pending_copy_bytes_ ARC_GUARDED_BY(mu_) = 0;  // of them, copies (spill_percent)
  // The writer is asked for a spill or an early batch.
  bool unasked_wanted_ ARC_GUARDED_BY(mu_) = false;
  // Registered early callers (RegisterEarlyCaller), and whether a change
  // of one made an early batch due that it has not written yet.
  static constexpr size_t kMaxEarlyCallers = 256;
  std::vector<std::thread::id> early_callers_ ARC_GUARDED_BY(mu_);
  bool early_left_ ARC_GUARDED_BY(mu_) = false;
  // When the last Commit began (early_write_window_ns); false before the first.
  bool commit_seen_ ARC_GUARDED_BY(mu_) = false;
  uint64_t last_commit_ns_ ARC_GUARDED_BY(mu_) = 0;
  std::deque<Block> blocks_ ARC_GUARDED_BY(mu_);       // in the arena, oldest first
  uint64_t blocks_bytes_ ARC_GUARDED_BY(mu_) = 0;  // the sum of blocks_' bytes
  uint64_t next_offset_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t next_seq_ ARC_GUARDED_BY(mu_) = 1;          // of the next block
  uint64_t last_itx_ ARC_GUARDED_BY(mu_) = 0;          // seq of the last change appended
  uint64_t durable_itx_ ARC_GUARDED_BY(mu_) = 0;       // every change up to it is durable
  uint64_t committed_txg_ ARC_GUARDED_BY(mu_) = 0;
  // Log bytes placed since the last request_sync (sync_kick_percent).
  uint64_t placed_since_kick_ ARC_GUARDED_BY(mu_) = 0;
  bool overflowed_ ARC_GUARDED_BY(mu_) = false;        // copies dropped since the last sync
  uint64_t overflow_txg_ ARC_GUARDED_BY(mu_) = 0;      // ... of changes up to this txg
  std::atomic<bool> overflowed_hint_{false};  // overflowed_, read without mu_
  struct Batch {
    uint64_t id = 0;
    uint64_t last_itx = 0;  // the newest change it covers
    bool done = false;
  };
  std::deque<Batch> inflight_ ARC_GUARDED_BY(mu_);  // oldest first
  uint64_t next_batch_id_ ARC_GUARDED_BY(mu_) = 1;
  uint64_t taken_itx_ ARC_GUARDED_BY(mu_) = 0;     // newest change in a started batch
  uint64_t wanted_itx_ ARC_GUARDED_BY(mu_) = 0;     // newest change a caller waits for
  bool writer_serving_ ARC_GUARDED_BY(mu_) = false;  // the writer owns the batches
  // Callers inside Commit.
  uint64_t committers_ ARC_GUARDED_BY(mu_) = 0;
  // Gathering (IntentLogOptions::gather_percent): the callers the last
  // batch written released, the changes appended since it finished, its
  // device time, and whether the writer waits for appends.
  uint64_t released_callers_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t appends_since_release_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t last_io_ns_ ARC_GUARDED_BY(mu_) = 0;
  bool gathering_ ARC_GUARDED_BY(mu_) = false;
  bool writer_stop_ ARC_GUARDED_BY(mu_) = false;
  bool replaying_ ARC_GUARDED_BY(mu_) = false;
  Status failed_ ARC_GUARDED_BY(mu_);
  std::deque<uint64_t> recent_starts_ ARC_GUARDED_BY(mu_);  // replay seqs of the newest 3 commits
  // Block buffers of earlier batches, kept for the next: a fresh buffer of
  // 64 KiB or more is a page mapping whose every page faults in, a smaller
  // one a heap block zeroed first. Enough are kept for a batch of a few MiB
  // (a database's bulk load flushes several MiB at a time): at most
  // kSpareBuffers, each at most max_block_bytes, kSpareBytes in all.
  static constexpr size_t kSpareBuffers = 16;
  static constexpr size_t kSpareBytes = 16u << 20;
  io::BufferCache buffers_;
  std::thread writer_;  // last: started when everything above is ready
};

}  // namespace arcstore::zil
