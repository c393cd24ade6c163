// Intent log: theory of operation.
//
// A FLUSH must make every write already replied to durable; a FUA write
// its own. Without a log that costs a txg sync (every dirty record, the
// trees, two device flushes). With it, a flush costs one sequential write
// of the changes not yet durable and ONE device flush.
//
//   volume write ----Append----> pending (copies, in apply order, seq 1,2,3..)
//                                   |
//   Flush / FUA ----Commit-----> a committer takes every pending change as
//                                one batch, packs it into blocks, places
//                                them in the arena, writes them (one write
//                                while they lie one after another) and
//                                flushes the device once (a batch that is
//                                one write is written with FUA instead):
//                                one flush serves every caller whose
//                                changes were pending. Up to
//                                max_inflight_commits batches are written
//                                and flushed at once (callers arriving
//                                while that many are in flight wait and
//                                form the next batch); a batch is
//                                acknowledged only when it and every
//                                earlier batch are durable, since replay
//                                stops at the first missing block.
//
// Who writes a batch: a caller alone writes its own, on its own thread (no
// wake-up between it and the device). When callers queue up behind a batch,
// the caller whose batch finished hands the queue to the log writer thread,
// which writes batches back to back while anyone waits for one, then goes
// idle again:
//
//   caller A: [batch 1: A      ]--HandOff--> returns
//   writer:                      [batch 2: B C D][batch 3: E F G H]--idle
//   callers B..H wait on the slot of the batch holding their change, so a
//   batch's end wakes its own callers only (kWaitSlots condition variables).
//
// The writer exists because without it each batch's end would wake every
// waiter, one of them would become the next writer after a context switch,
// and the caller whose batch just finished would often get in first with a
// batch of its own one change.
//
// Gathering: callers that flush after every write come back to the log
// soon after their batch releases them: microseconds for threads in
// process, a WRITE and a FLUSH round trip (hundreds of microseconds on two
// busy CPUs) for NBD clients. Writing the next batch
// at once (or going idle, so that the first one back writes alone) splits
// them into two groups that take turns at the device, each batch carrying
// half of them. So the writer, before it starts a batch or goes idle, waits
// until as many changes were appended since the last batch finished as
// that batch released callers (its records, at most the callers that were
// in Commit), for at most gather_percent of its device time (by default
// all of it, at most 1 ms: a caller that misses the batch would wait at
// least that long for the next one):
//
//   no gathering:  [A B C D][E F G H][A B C D][E F G H]   4 per flush
//   gathering:     [A..H]~~[A..H]~~[A..H]                 8 per flush
//                        ^ the writer waits for A..H to append again
//
// A batch that released one caller (a caller alone, however many changes
// it made) starts no gathering, so a single thread's commits never wait
// for anyone.
//
//   txg T commits --TxgCommitted--> changes of txgs <= T are dropped from
//                                pending (the tree has them); arena space no
//                                uberblock of the newest three replays from
//                                is reused.
//
// The arena keeps the blocks of every txg from the oldest of the newest
// three committed ones on (see TxgCommitted): up to five txgs' worth while
// one syncs and the next waits for it. So every sync_kick_percent of the
// arena placed, a commit asks for a txg sync (request_sync, reason
// log_space) without waiting for it: each txg then holds about that share
// of the log, and a txg that opens while another syncs is asked for as
// soon as it has its share, so that it syncs right after. Else flush-heavy
// work that outruns the txg timeout fills the arena and every commit falls
// back to a synchronous txg sync, all writers waiting for it. The count
// runs from the last kick, not from the last txg commit: counted from the
// commit, each txg would also take the log written while the one before
// it synced, and grow until the arena fills.
//
// The arena is a contiguous extent of pool space (allocated by the pool in
// a txg sync, named by the uberblock). Blocks are written at the arena's
// head one after another and wrap to offset 0 when a block does not fit
// before the end:
//
//   arena:  | free | blk s | blk s+1 | blk s+2 |  free        |
//                  ^ oldest kept               ^ next block (or 0)
//
// Each uberblock's header says where replay of that pool state starts: the
// first block holding a change of a later txg (or the head, when there is
// none), with the log guid and sequence number expected there. Replay
// (ReadLog) follows the chain from there: the block at the expected place
// (or at 0) with the right guid, sequence and checksum, until one is not.
// Sequence numbers are never reused within a guid, and every open starts a
// new guid, so a stale block (of an earlier life of the log, or beyond a
// torn one) can never extend a chain.
//
// Open: the pool reads the chain, applies the records of txgs newer than
// the uberblock's to its volumes as ordinary writes (SetReplaying: not
// logged again), and syncs a txg before anyone may use the pool. Until then
// the old chain's blocks are kept and headers still point at them, so a
// crash during replay replays the same records again (idempotent: records
// carry absolute offsets and data). A read-only open applies the records
// in memory only and writes nothing (the chain stays for a writable open).
//
// Fallbacks (each counted): log disabled, no arena yet, arena full, or
// change copies dropped because pending passed max_pending_bytes; then a
// commit waits for a txg sync instead, which makes everything durable.
// Once copies were dropped, every commit falls back until a txg holding
// all of them commits, so a change appended meanwhile is not copied
// either (its copy could only be dropped): the overflow extends to its
// txg and it is counted in dropped_copies. A client streaming writes
// without flushing thus costs the log nothing per write; its first flush
// syncs a txg, which ends the overflow, and the log takes copies again.
// CommitWouldSync tells a caller beforehand that a commit would fall back
// (the NBD server then submits the FLUSH rather than run it on the
// connection's reader thread).
//
// Spilling: small writes with no flush for seconds (a filesystem between
// its journal commits) would reach the cap within a txg, and the flush
// that follows would sync the whole txg: every partial write dirtied a
// whole record, so that sync writes far more than the log would. So when
// the copies pending pass spill_percent of the cap and nobody is
// committing, Append asks the writer thread to write them as a batch of
// its own (AskWriterIfDue; the end of every batch asks again). The next
// flush then commits only what came after:
//
//   copies:  0 ....... spill share ....... cap
//            appended ------^ the writer writes them as a batch
//   flush:   commits the few since the last spill, no txg sync
//
// A spill is bounded by the arena, not by the txg pipeline: it starts
// only while the arena's kept blocks and the copies together fit in half
// of it, and it never counts towards sync_kick_percent, so it asks for no
// txg sync (an early txg would rewrite the same records more often). Past
// that bound the copies run into the cap as without spilling. Whole
// records held by reference never call for a spill: the txg writes them
// anyway. A spill the arena cannot place after all drops its copies as
// the cap does (AbandonUnasked).
//
// Early writes: a client that flushes after each write (a database's log,
// a journal's commit block) sends the FLUSH a round trip after its WRITE
// was answered. Committing only then puts the log write and the device's
// flush both on the FLUSH's path. So while commits come often (the last
// began within early_write_window_ns), a change appended with nobody
// committing and nothing in flight asks the writer to write every pending
// change at once, as a batch of its own, durable when it completes:
//
//   client:  WRITE ..reply..  (round trip)  FLUSH ......... reply
//   late:                                   [write + flush]
//   early:          [write + flush]         (durable: at once)
//
// A FLUSH arriving while the early batch is at the device waits for it
// (the batch holds its change), then finds its change durable. Early
// batches are durable like any other, rather than written now and flushed
// by the FLUSH: a client's round trip is longer than the write and the
// device flush together, so the FLUSH mostly finds nothing left to do.
// They count towards sync_kick_percent like commits, share the spill's
// bound on the arena (one the arena cannot place after all drops its
// copies, AbandonUnasked) and release nobody, so gathering goes by
// commits. Work that flushes seldom sees the window closed and writes
// nothing early.
//
// Who writes an early batch: a thread that waits for its own client
// between changes (the NBD server's connection reader) registers as an
// early caller (RegisterEarlyCaller). An early batch its change makes due
// is left to it (early_left_) and it writes the batch itself in
// WriteEarly, called after it has sent its replies and before it sleeps
// for the next request; any other thread's change wakes the writer:
//
//   writer thread:  reader: WRITE, reply --------- sleep ----- FLUSH: durable
//                   writer:        wake [write + flush] sleep
//   early caller:   reader: WRITE, reply [write + flush] FLUSH: durable
//
// The client's round trip overlaps the batch either way, and the second
// form costs no wake-up of the writer, no context switch to it and back,
// and often no sleep of the reader (the FLUSH is waiting when the batch
// completes). A batch left when its caller unregisters goes to the writer.
//
// Failure: a failed log write or flush fails the log and, through
// on_failure, the pool's txg pipeline: every later commit, write and flush
// returns the error and no further txg is synced, the same as a failed txg
// sync (a failing device's unflushed data is never trusted).
//
// Whole records by reference: a write covering a whole record is not
// copied at Append time. The volume's dirty copy of the record holds
// exactly its bytes, so the log takes a second hold on that ARC buffer
// (AppendHeld, holder kind intent_log). A writer that changes the record
// while the log still holds it writes into a new buffer (copy on write;
// for a whole overwrite, no copy at all), so a held buffer never changes.
// A commit copies each change's bytes once, into the log block, and lets
// go of the holds before its I/O; TxgCommitted(T) drops the pending
// changes of T and waits for a batch still copying, so that the volumes
// (called next) can publish T's buffers with no other holder. Work that
// never flushes thus costs the log no copy at all:
//
//   write (whole record) --> dirty copy [buf] <-- hold -- pending change
//   next write, log holds buf --> new buffer; the old one is the log's
//   commit: copy buf into the block, let go; or txg commits: let go
//
// Copies: the bytes of a change that is not a whole record are copied at
// Append, outside mu_, into the log's CopyArena (copy_arena.h): cut one
// after another from 1 MiB chunks that are kept for reuse once their
// copies are gone, so that letting go of thousands of copies at once (a
// batch encoded, a txg committed, the cap's overflow) is an atomic
// decrement each, and the memory stays mapped and warm for the next ones.
// The chunks are bounded (twice max_pending_bytes); an arena with no room
// is handled like the cap: the copies are dropped and commits fall back.
// The overflow lets go of the dropped changes' holds under mu_ and of
// their copies after it, so the writer that overflowed never frees them
// with the log locked.
//
// Locking: mu_ guards everything; it is never held across I/O. Volumes call
// Append with their own lock held (volume lock, then mu_); holds are let
// go of under mu_ (mu_, then an ARC shard lock).
#include "zil/intent_log.h"

#include <algorithm>
#include <random>

#include "base/random.h"
#include "base/thread_name.h"
#include "format/encoding.h"
#include "io/aligned_buffer.h"

namespace arcstore::zil {

using format::LogRecord;

namespace {

// Runs `fn` with `mu` released and takes `mu` again before returning: the
// scoped form of unlock ... lock around work done without the lock. (A
// scoped unlocking object is not understood by every clang's analysis.)
// `fn` is analysed as holding no lock, as it runs.
template <typename Fn>
void RunUnlocked(Mutex* mu, Fn&& fn) ARC_REQUIRES(mu) ARC_NO_THREAD_SAFETY_ANALYSIS {
  mu->Unlock();
  fn();
  mu->Lock();
}
uint64_t RoundUp(uint64_t n, uint64_t unit) { return (n + unit - 1) / unit * unit; }
}  // namespace

Status IntentLogOptions::Validate() const {
  if (max_block_bytes < 64 * 1024 || max_block_bytes > format::kMaxLogBlockBytes) {
    return Status::InvalidArgument("intent log: max_block_bytes " +
                                   std::to_string(max_block_bytes) +
                                   " out of bounds [64 KiB, 8 MiB]");
  }
  if (max_pending_bytes < (1u << 20) || max_pending_bytes > (64ull << 30)) {
    return Status::InvalidArgument("intent log: max_pending_bytes " +
                                   std::to_string(max_pending_bytes) +
                                   " out of bounds [1 MiB, 64 GiB]");
  }
  if (sync_kick_percent > 50) {
    return Status::InvalidArgument("intent log: sync_kick_percent " +
                                   std::to_string(sync_kick_percent) + " out of bounds [0, 50]");
  }
  if (spill_percent > 100) {
    return Status::InvalidArgument("intent log: spill_percent " + std::to_string(spill_percent) +
                                   " out of bounds [0, 100]");
  }
  if (gather_percent > 100) {
    return Status::InvalidArgument("intent log: gather_percent " + std::to_string(gather_percent) +
                                   " out of bounds [0, 100]");
  }
  if (early_write_window_ns > 1000ull * 1000 * 1000) {
    return Status::InvalidArgument("intent log: early_write_window_ns " +
                                   std::to_string(early_write_window_ns) +
                                   " out of bounds [0, 1 s]");
  }
  if (gather_max_ns > 10ull * 1000 * 1000 * 1000) {
    return Status::InvalidArgument("intent log: gather_max_ns " + std::to_string(gather_max_ns) +
                                   " out of bounds [0, 10 s]");
  }
  if (max_inflight_commits < 1 || max_inflight_commits > 64) {
    return Status::InvalidArgument("intent log: max_inflight_commits " +
                                   std::to_string(max_inflight_commits) + " out of bounds [1, 64]");
  }
  return Status::Ok();
}

IntentLogStats::IntentLogStats(stats::Registry* r)
    : commit_requests(r->AddCounter("zil", "commit_requests", stats::Unit::kOps,
                                    "flushes and FUA writes that asked for a commit")),
      commits(r->AddCounter("zil", "commits", stats::Unit::kOps,
                            "batches written to the log, each with one device flush")),
      records(r->AddCounter("zil", "records", stats::Unit::kOps, "records written to the log")),
      bytes(r->AddCounter("zil", "bytes", stats::Unit::kBytes, "log block bytes written")),
      blocks(r->AddCounter("zil", "blocks", stats::Unit::kOps, "log blocks written")),
      flushes(r->AddCounter("zil", "flushes", stats::Unit::kOps,
                            "device flushes issued by log commits")),
      fua_writes(r->AddCounter("zil", "fua_writes", stats::Unit::kOps,
                               "commits written as one write with FUA instead of a flush")),
      fallback_syncs(r->AddCounter("zil", "fallback_syncs", stats::Unit::kOps,
                                   "commits served by a txg sync instead")),
      dropped_copies(r->AddCounter("zil", "dropped_copies", stats::Unit::kOps,
                                   "change copies dropped for memory, or not made while "
                                   "dropped ones are not yet synced")),
      sync_kicks(r->AddCounter("zil", "sync_kicks", stats::Unit::kOps,
                               "txg syncs asked for because the log filled a share of its arena")),
      replayed_records(
          r->AddCounter("zil", "replayed_records", stats::Unit::kOps, "records replayed at open")),
      writer_batches(r->AddCounter("zil", "writer_batches", stats::Unit::kOps,
                                   "batches the log writer thread wrote for queued callers")),
      buffers_allocated(r->AddCounter("zil", "buffers_allocated", stats::Unit::kOps,
                                      "log block buffers allocated (the rest reuse an "
                                      "earlier batch's)")),
      copy_chunks_made(r->AddCounter("zil", "copy_chunks_made", stats::Unit::kOps,
                                     "1 MiB chunks for change copies made on a writer's path "
                                     "(the rest reuse kept or pretouched ones)")),
      gathers(r->AddCounter("zil", "gathers", stats::Unit::kOps,
                            "times the log writer waited for the callers of the last batch to "
                            "append again before writing the next")),
      spills(r->AddCounter("zil", "spills", stats::Unit::kOps,
                           "times the copies not yet logged passed spill_percent of the cap "
                           "with nobody committing, and the log writer was asked to write "
                           "them")),
      early_writes(r->AddCounter("zil", "early_writes", stats::Unit::kOps,
                                 "times a change appended soon after a commit, with nobody "
                                 "committing, had the log writer write the pending changes "
                                 "at once (early_write_window_ns)")),
      batch_records(
          r->AddHistogram("zil", "batch_records", stats::Unit::kOps, "records per commit batch")),
      commit_latency_ns(r->AddHistogram("zil", "commit_latency_ns", stats::Unit::kNanoseconds,
                                        "time a commit request waited")),
      copy_bytes(r->AddGauge("zil", "copy_bytes", stats::Unit::kBytes,
                             "memory of the change copies' chunks (1 MiB each), in use and "
                             "kept for reuse")),
      pretouched_bytes(r->AddGauge("zil", "pretouched_bytes", stats::Unit::kBytes,
                                   "memory the log made and wrote once when it started "
                                   "(pretouch): copy chunks and block buffers")),
      pending_bytes(r->AddGauge("zil", "pending_bytes", stats::Unit::kBytes,
                                "copies of changes not yet in the log")),
      arena_used_bytes(r->AddGauge("zil", "arena_used_bytes", stats::Unit::kBytes,
                                   "log arena bytes kept for replay")) {}

Result<LogReplay> ReadLog(io::Device* device, uint32_t unit, const format::IntentLogHeader& h) {
  LogReplay out;
  out.start.header = h;
  if (!h.present()) {
    out.end = "no log arena";
    return out;
  }
  if (h.arena_bytes % unit != 0 || h.arena_offset_bytes % unit != 0 ||
      h.replay_offset_bytes % unit != 0 ||
      h.arena_offset_bytes + h.arena_bytes > device->size_bytes()) {
    return Status::Corruption("intent log arena " + std::to_string(h.arena_offset_bytes) + "+" +
                              std::to_string(h.arena_bytes) + " does not fit device " +
                              device->name());
  }
  const size_t align = io::BufferAlignmentFor(*device);
  uint64_t at = h.replay_offset_bytes, seq = h.replay_sequence;
  // The block at `offset` if it is block `seq` of this log, else an error
  // saying why not.
  auto read_block = [&](uint64_t offset, std::vector<LogRecord>* records,
                        uint64_t* bytes) -> Status {
    if (offset + unit > h.arena_bytes) return Status::NotFound("past the arena's end");
    io::AlignedBuffer first(unit, align);
    ARC_RETURN_IF_ERROR(io::ReadSync(*device, h.arena_offset_bytes + offset, first.span()));
    ARC_ASSIGN_OR_RETURN(format::LogBlockHeader bh, format::DecodeLogBlockHeader(first.span()));
    if (bh.log_guid != h.log_guid || bh.sequence != seq) {
      return Status::NotFound("block of guid " + format::Hex64(bh.log_guid) + " sequence " +
                              std::to_string(bh.sequence));
    }
    if (bh.block_bytes % unit != 0 || offset + bh.block_bytes > h.arena_bytes) {
      return Status::Corruption("block of " + std::to_string(bh.block_bytes) +
                                " bytes does not fit the arena");
    }
    io::AlignedBuffer whole(bh.block_bytes, align);
    ARC_RETURN_IF_ERROR(io::ReadSync(*device, h.arena_offset_bytes + offset, whole.span()));
    ARC_ASSIGN_OR_RETURN(*records, format::DecodeLogBlock(whole.span(), nullptr));
    *bytes = bh.block_bytes;
    return Status::Ok();
  };
  for (size_t blocks = 0;; blocks++) {
    if (blocks > h.arena_bytes / unit) return Status::Corruption("intent log chain loops");
    std::vector<LogRecord> records;
    uint64_t bytes = 0;
    Status here = read_block(at, &records, &bytes);
    if (!here.ok() && at != 0) {
      Status wrapped = read_block(0, &records, &bytes);
      if (wrapped.ok()) {
        at = 0;
        here = wrapped;
      }
    }
    if (!here.ok()) {
      out.end = "block " + std::to_string(seq) + " at arena offset " + std::to_string(at) + ": " +
                here.ToString();
      break;
    }
    for (LogRecord& r : records) {
      if (r.seq <= out.last_seq) {
        return Status::Corruption("intent log record seq " + std::to_string(r.seq) +
                                  " does not follow " + std::to_string(out.last_seq));
      }
      out.last_seq = r.seq;
      out.records.push_back(std::move(r));
    }
    out.start.chain.push_back(LogStart::Block{at, bytes, seq});
    at += bytes;
    seq++;
  }
  out.start.next_offset = at;
  out.start.next_seq = seq;
  return out;
}

IntentLog::IntentLog(const IntentLogOptions& options, const IntentLogEnv& env,
                     const LogStart& start)
    : options_(options),
      env_(env),
      stats_(env.registry),
      guid_(NewGuid()),
      copies_(CopyArenaFor(options.max_pending_bytes)),
      buffers_(io::BufferAlignmentFor(*env.device), kSpareBuffers,
               options.max_block_bytes, kSpareBytes) {
  if (options_.pretouch) {
    const uint64_t chunks = copies_.Prefill(copies_.retain_chunks());
    const uint64_t blocks = buffers_.Prefill(
        std::min<uint64_t>(kSpareBuffers, kSpareBytes / options_.max_block_bytes),
        options_.max_block_bytes);
    stats_.pretouched_bytes->Set(static_cast<int64_t>(chunks + blocks));
  }
  MutexLock l(&mu_);
  arena_ = start.header;
  // The chain being replayed keeps its guid and stays the replay start
  // until ReplayApplied says which txg holds it.
  for (const LogStart::Block& b : start.chain) {
    blocks_.push_back(Block{b.offset, b.bytes, b.seq, start.header.log_guid, UINT64_MAX});
    blocks_bytes_ += b.bytes;
  }
  next_offset_ = start.next_offset;
  next_seq_ = std::max<uint64_t>(start.next_seq, 1);
  last_itx_ = durable_itx_ = taken_itx_ = start.last_record_seq;
  UpdateGauges();
  if (options_.writer_thread) writer_ = std::thread([this] {
    NameThisThread("zil_writer");
    WriterLoop();
  });
}

void IntentLog::SetReplaying(bool replaying) {
  MutexLock l(&mu_);
  replaying_ = replaying;
}

void IntentLog::ReplayApplied(uint64_t txg, uint64_t records) {
  stats_.replayed_records->Add(records);
  MutexLock l(&mu_);
  for (Block& b : blocks_) {
    if (b.max_txg == UINT64_MAX) b.max_txg = txg;
  }
}

std::span<const uint8_t> IntentLog::Pending::data() const {
  if (held) return held.data().first(rec.length);
  return copy.bytes();
}

CopyArena::Options IntentLog::CopyArenaFor(uint64_t max_pending_bytes) {
  const uint64_t cap_chunks =
      std::max<uint64_t>(1, (max_pending_bytes + CopyArena::kChunkBytes - 1) / CopyArena::kChunkBytes);
  return CopyArena::Options{.max_chunks = static_cast<uint32_t>(2 * cap_chunks + 2),
                            .retain_chunks = static_cast<uint32_t>(cap_chunks + 1)};
}

uint64_t IntentLog::Append(format::LogRecordType type, uint64_t volume_guid, uint64_t txg,
                           uint64_t offset, uint64_t length, const uint8_t* data) {
  Pending p;
  p.rec = LogRecord{.type = type, .volume_guid = volume_guid, .txg = txg, .offset = offset,
                    .length = length};
  const bool write = type == format::LogRecordType::kWrite;
  // While overflowed the copy would be dropped: do not make it (a stale
  // answer here is settled under mu_ in AppendPending).
  if (write && !overflowed_hint_.load(std::memory_order_relaxed)) {
    bool made = false;
    p.copy = copies_.Copy({data, length}, &made);
    if (made) stats_.copy_chunks_made->Add();
  }
  return AppendPending(std::move(p), write ? data : nullptr);
}

uint64_t IntentLog::AppendHeld(uint64_t volume_guid, uint64_t txg, uint64_t offset,
                               uint64_t length, arc::ArcHold data) {
  ARC_CHECK(data && length <= data.bytes());
  Pending p;
  p.rec = LogRecord{.type = format::LogRecordType::kWrite, .volume_guid = volume_guid,
                    .txg = txg, .offset = offset, .length = length};
  p.held = std::move(data);
  return AppendPending(std::move(p), nullptr);
}

uint64_t IntentLog::AppendPending(Pending p, const uint8_t* uncopied) {
  std::deque<Pending> dropped;  // freed after mu_ is let go of
  MutexLock l(&mu_);
  if (replaying_) return 0;
  p.rec.seq = ++last_itx_;
  if (++appends_since_release_ >= released_callers_ && gathering_) writer_cv_.Signal();
  const uint64_t size = p.rec.EncodedBytes();
  if (overflowed_ && overflow_txg_ > committed_txg_) {
    // Copies were dropped and no txg holding them has committed: every
    // commit falls back to a txg sync until one does, so this change
    // needs no copy either; the overflow now lasts until its txg commits.
    stats_.dropped_copies->Add();
    overflow_txg_ = std::max(overflow_txg_, p.rec.txg);
  } else {
    if (uncopied != nullptr && !p.copy) {
      // Append saw an overflow that has ended since: copy now.
      bool made = false;
      p.copy = copies_.Copy({uncopied, p.rec.length}, &made);
      if (made) stats_.copy_chunks_made->Add();
    }
    if (pending_bytes_ + size > options_.max_pending_bytes || (uncopied != nullptr && !p.copy)) {
      // Too much unlogged change to keep (or no room for this copy): drop
      // the copies; the next commit syncs a txg instead (which makes these
      // durable too). The holds go now (TxgCommitted promises none is left
      // of a committed txg once it returns), the copies after mu_.
      stats_.dropped_copies->Add(pending_.size());
      for (Pending& q : pending_) {
        overflow_txg_ = std::max(overflow_txg_, q.rec.txg);
        q.held = arc::ArcHold();
      }
      overflow_txg_ = std::max(overflow_txg_, p.rec.txg);
      overflowed_ = true;
      overflowed_hint_.store(true, std::memory_order_relaxed);
      dropped.swap(pending_);
      pending_bytes_ = 0;
      pending_copy_bytes_ = 0;
    } else {
      pending_bytes_ += size;
      if (p.copy) pending_copy_bytes_ += size;
      pending_.push_back(std::move(p));
      AskWriterIfDue(!early_callers_.empty() && IsEarlyCaller());
    }
  }
  stats_.pending_bytes->Set(static_cast<int64_t>(pending_bytes_));
  return last_itx_;
}

Status IntentLog::Commit() {
  const uint64_t start_ns = env_.clock->NowNs();
  stats_.commit_requests->Add();
  MutexLock l(&mu_);
  const uint64_t target = last_itx_;
  wanted_itx_ = std::max(wanted_itx_, target);
  committers_++;
  commit_seen_ = true;
  last_commit_ns_ = start_ns;
  Status s;
  while (durable_itx_ < target) {
    if (!failed_.ok()) break;
    if (taken_itx_ < target && !writer_serving_ &&
        inflight_.size() < options_.max_inflight_commits) {
      // Changes of this caller are in no batch yet and nobody is writing
      // batches: start one with every change pending now (other callers'
      // too).
      s = CommitBatch();
      if (!s.ok()) break;
      HandOff();
      continue;
    }
    WaitSlot(target).Wait(&mu_);
  }
  committers_--;
  if (!s.ok()) return s;
  if (failed_.ok()) stats_.commit_latency_ns->Record(env_.clock->NowNs() - start_ns);
  return failed_;
}

void IntentLog::HandOff() {
  if (wanted_itx_ <= taken_itx_ || writer_serving_) return;
  if (options_.writer_thread && !writer_stop_) {
    writer_serving_ = true;
    writer_cv_.Signal();
    return;
  }
  // No writer: the callers waiting for the next batch write it themselves.
  done_cv_[next_batch_id_ % kWaitSlots].SignalAll();
}

CondVar& IntentLog::WaitSlot(uint64_t target) {
  for (const Batch& b : inflight_) {
    if (b.last_itx >= target) return done_cv_[b.id % kWaitSlots];
  }
  return done_cv_[next_batch_id_ % kWaitSlots];
}

void IntentLog::WakeAll() {
  for (CondVar& cv : done_cv_) cv.SignalAll();
  writer_cv_.SignalAll();
}

void IntentLog::WriterLoop() {
  MutexLock l(&mu_);
  for (;;) {
    while (!writer_serving_ && !unasked_wanted_ && !writer_stop_) writer_cv_.Wait(&mu_);
    if (writer_stop_) {
      writer_serving_ = false;
      WakeAll();  // callers waiting for a next batch write it themselves
      return;
    }
    if (!writer_serving_) {
      // Asked for a spill or an early write; a caller may have committed
      // since.
      unasked_wanted_ = false;
      BatchKind kind;
      if (UnaskedBatchDue(&kind)) {
        (void)CommitBatch(kind);  // a failure fails the log
        // Callers that came meanwhile wait for the next batch.
        HandOff();
      }
      continue;
    }
    if (failed_.ok() && wanted_itx_ <= taken_itx_) {
      // Nobody waits for a batch yet, but the callers the last batch
      // released are writing their next changes: wait for them here, so
      // that the first one back does not write a batch of its own alone.
      Gather();
      if (writer_stop_) continue;
    }
    if (!failed_.ok() || wanted_itx_ <= taken_itx_) {
      // Nobody waits for a batch not yet started: callers write their own
      // again until they queue up.
      writer_serving_ = false;
      continue;
    }
    if (inflight_.size() >= options_.max_inflight_commits) {
      writer_cv_.Wait(&mu_);  // a caller's batch is still at the device
      continue;
    }
    Gather();
    if (writer_stop_) continue;
    stats_.writer_batches->Add();
    (void)CommitBatch();  // a failure fails the log; the waiters see failed_
  }
}

void IntentLog::Gather() {
  // A batch that released one caller: nobody to gather.
  if (options_.gather_percent == 0 || released_callers_ < 2 ||
      appends_since_release_ >= released_callers_) {
    return;
  }
  const uint64_t window_ns =
      std::min<uint64_t>(last_io_ns_ / 100 * options_.gather_percent, options_.gather_max_ns);
  if (window_ns == 0) return;
  stats_.gathers->Add();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(window_ns);
  gathering_ = true;
  while (appends_since_release_ < released_callers_ && !writer_stop_ && failed_.ok()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    (void)writer_cv_.WaitFor(&mu_, deadline - now);
  }
  gathering_ = false;
}

void IntentLog::StopWriter() {
  {
    MutexLock l(&mu_);
    writer_stop_ = true;
    writer_cv_.SignalAll();
  }
  if (writer_.joinable()) writer_.join();
}

IntentLog::~IntentLog() { StopWriter(); }

bool IntentLog::BatchFinished(uint64_t id) {
  for (const Batch& b : inflight_) {
    if (b.id == id) return b.done;
  }
  return true;  // acknowledged and gone (or 0: an earlier life's block)
}

void IntentLog::BatchDone(uint64_t id) {
  for (Batch& b : inflight_) {
    if (b.id == id) b.done = true;
  }
  // Durability advances through the prefix of finished batches only: a
  // later batch's flush does not cover an earlier batch's write, and replay
  // stops at the first block that is missing.
  while (!inflight_.empty() && inflight_.front().done) {
    durable_itx_ = std::max(durable_itx_, inflight_.front().last_itx);
    done_cv_[inflight_.front().id % kWaitSlots].SignalAll();
    inflight_.pop_front();
  }
  if (writer_serving_) writer_cv_.Signal();  // a slot is free
}

void IntentLog::AskWriterIfDue(bool appender_writes_early) {
  BatchKind kind;
  if (unasked_wanted_ || writer_serving_ || !UnaskedBatchDue(&kind)) return;
  if (kind == BatchKind::kEarly && appender_writes_early) {
    early_left_ = true;  // the appender writes it before it waits (WriteEarly)
    return;
  }
  (kind == BatchKind::kSpill ? stats_.spills : stats_.early_writes)->Add();
  unasked_wanted_ = true;
  writer_cv_.Signal();
}

bool IntentLog::IsEarlyCaller() const {
  return std::find(early_callers_.begin(), early_callers_.end(), std::this_thread::get_id()) !=
         early_callers_.end();
}

void IntentLog::RegisterEarlyCaller() {
  MutexLock l(&mu_);
  if (early_callers_.size() < kMaxEarlyCallers && !IsEarlyCaller()) {
    early_callers_.push_back(std::this_thread::get_id());
  }
}

void IntentLog::UnregisterEarlyCaller() {
  MutexLock l(&mu_);
  std::erase(early_callers_, std::this_thread::get_id());
  // A batch it left is still due: the writer takes it.
  if (early_left_) {
    early_left_ = false;
    AskWriterIfDue();
  }
}

void IntentLog::WriteEarly() {
  MutexLock l(&mu_);
  if (!early_left_) return;
  early_left_ = false;
  BatchKind kind;
  if (unasked_wanted_ || writer_serving_ || !UnaskedBatchDue(&kind)) return;
  (kind == BatchKind::kSpill ? stats_.spills : stats_.early_writes)->Add();
  (void)CommitBatch(kind);  // a failure fails the log; later commits see it
  HandOff();                // callers that came meanwhile: the writer serves them
}

bool IntentLog::UnaskedBatchDue(BatchKind* kind) const {
  if (!options_.writer_thread || writer_stop_ || !failed_.ok() || replaying_ || MustFallBack() ||
      pending_.empty()) {
    return false;
  }
  // Nobody waits for a batch not yet started, and nothing is in flight: the
  // batch starts alone, and a commit of its changes waits for it.
  if (wanted_itx_ > taken_itx_ || !inflight_.empty()) return false;
  if ((blocks_bytes_ + pending_bytes_) * 2 > arena_.arena_bytes) return false;
  if (options_.spill_percent > 0 &&
      pending_copy_bytes_ * 100 >= options_.max_pending_bytes * options_.spill_percent) {
    *kind = BatchKind::kSpill;
    return true;
  }
  // Nobody is committing (a committer writes the changes itself), and the
  // last commit began inside the window.
  if (options_.early_write_window_ns == 0 || committers_ > 0 || !commit_seen_) return false;
  if (env_.clock->NowNs() - last_commit_ns_ > options_.early_write_window_ns) return false;
  *kind = BatchKind::kEarly;
  return true;
}

void IntentLog::AbandonUnasked(uint64_t id, uint64_t taken_before, uint64_t max_txg,
                               uint64_t changes) {
  ARC_CHECK(!inflight_.empty() && inflight_.back().id == id);
  inflight_.pop_back();
  next_batch_id_--;  // nobody waits on its slot: the batch started with nobody committing
  taken_itx_ = taken_before;
  stats_.dropped_copies->Add(changes);
  overflow_txg_ = std::max(overflow_txg_, max_txg);
  overflowed_ = true;
  overflowed_hint_.store(true, std::memory_order_relaxed);
  if (writer_serving_) writer_cv_.Signal();
}

bool IntentLog::MustFallBack() const {
  return !options_.enabled || !arena_.present() || (overflowed_ && overflow_txg_ > committed_txg_);
}

bool IntentLog::CommitWouldSync() {
  MutexLock l(&mu_);
  return durable_itx_ < last_itx_ && MustFallBack();
}

Status IntentLog::Fallback(uint64_t id, uint64_t batch_last) {
  stats_.fallback_syncs->Add();
  Status s;
  RunUnlocked(&mu_, [&] { s = env_.sync_all(); });
  if (!s.ok()) {
    // The batch is not durable: fail the log, so that no later Commit
    // acknowledges it (BatchDone below advances durable_itx_ past it).
    if (failed_.ok()) failed_ = s.WithContext("intent log commit (txg sync)");
    BatchDone(id);
    WakeAll();
    return s;
  }
  // The txg sync made every change appended before it durable, whatever
  // the batches in flight do.
  durable_itx_ = std::max(durable_itx_, batch_last);
  BatchDone(id);
  return Status::Ok();
}

uint64_t IntentLog::Place(uint64_t bytes) {
  const uint64_t size = arena_.arena_bytes;
  if (bytes > size) return UINT64_MAX;
  if (blocks_.empty()) return next_offset_ + bytes <= size ? next_offset_ : 0;
  const Block& front = blocks_.front();
  const uint64_t end = next_offset_;  // end of the newest block
  const bool wrapped = blocks_.back().offset < front.offset;
  if (!wrapped) {
    if (end + bytes <= size) return end;
    return bytes <= front.offset ? 0 : UINT64_MAX;
  }
  return end + bytes <= front.offset ? end : UINT64_MAX;
}

Status IntentLog::CommitBatch(BatchKind kind) {
  const bool unasked = kind != BatchKind::kCommit;
  const uint64_t batch_last = last_itx_;
  const uint64_t taken_before = taken_itx_;
  taken_itx_ = batch_last;
  const uint64_t id = next_batch_id_++;
  inflight_.push_back(Batch{id, batch_last, false});
  std::deque<Pending> batch = TakePending();
  if (MustFallBack()) {
    batch.clear();  // let go of the holds: the txg sync publishes their buffers
    return Fallback(id, batch_last);
  }
  if (batch.empty()) {
    BatchDone(id);
    return Status::Ok();
  }
  uint64_t max_txg = 0;
  if (unasked) {
    for (const Pending& p : batch) max_txg = std::max(max_txg, p.rec.txg);
  }
  std::vector<PlannedBlock> planned;
  if (!PlanBlocks(id, &batch, &planned)) {
    // Let go of the holds first: the txg sync publishes their buffers.
    const uint64_t changes = batch.size();
    planned.clear();
    batch.clear();
    if (unasked) {
      AbandonUnasked(id, taken_before, max_txg, changes);
      return Status::Ok();
    }
    return Fallback(id, batch_last);
  }
  const bool kick = kind != BatchKind::kSpill && NoteKick(planned);
  const uint64_t guid = guid_;
  const format::IntentLogHeader arena = arena_;
  encoding_++;
  EncodedBatch encoded;
  Status s;
  RunUnlocked(&mu_, [&] {
    if (kick && env_.request_sync) {
      stats_.sync_kicks->Add();
      env_.request_sync();
    }
    s = EncodeBatch(guid, &planned, &encoded);
    if (s.ok()) s = WriteBatch(arena, &encoded);
    for (io::AlignedBuffer& buf : encoded.buffers) buffers_.Give(std::move(buf));
  });
  return ReleaseBatch(id, s, encoded, kind);
}

std::deque<IntentLog::Pending> IntentLog::TakePending() {
  std::deque<Pending> batch;
  batch.swap(pending_);
  pending_bytes_ = 0;
  pending_copy_bytes_ = 0;
  stats_.pending_bytes->Set(0);
  // Changes a committed txg holds need no log record.
  const uint64_t committed = committed_txg_;
  std::erase_if(batch, [committed](const Pending& p) { return p.rec.txg <= committed; });
  return batch;
}

bool IntentLog::PlanBlocks(uint64_t id, std::deque<Pending>* batch,
                           std::vector<PlannedBlock>* planned) {
  const uint64_t unit = env_.unit_bytes;
  const uint64_t saved_offset = next_offset_, saved_seq = next_seq_;
  const size_t saved_blocks = blocks_.size();
  for (size_t i = 0; i < batch->size();) {
    std::vector<Pending> in_block;
    uint64_t need = format::kLogBlockHeaderBytes, max_txg = 0;
    while (i < batch->size() && (in_block.empty() || need + (*batch)[i].rec.EncodedBytes() <=
                                                         options_.max_block_bytes)) {
      need += (*batch)[i].rec.EncodedBytes();
      max_txg = std::max(max_txg, (*batch)[i].rec.txg);
      in_block.push_back(std::move((*batch)[i++]));
    }
    const uint64_t bytes = RoundUp(need, unit);
    const uint64_t at = Place(bytes);
    if (at == UINT64_MAX) {
      // The arena is full: undo the placements; a txg sync makes the whole
      // batch durable and frees the arena.
      while (blocks_.size() > saved_blocks) {
        blocks_bytes_ -= blocks_.back().bytes;
        blocks_.pop_back();
      }
      next_offset_ = saved_offset;
      next_seq_ = saved_seq;
      return false;
    }
    Block b{at, bytes, next_seq_++, guid_, max_txg, id};
    next_offset_ = at + bytes;
    blocks_.push_back(b);
    blocks_bytes_ += b.bytes;
    planned->push_back(PlannedBlock{b, std::move(in_block)});
  }
  UpdateGauges();
  return true;
}

bool IntentLog::NoteKick(const std::vector<PlannedBlock>& planned) {
  for (const PlannedBlock& p : planned) placed_since_kick_ += p.block.bytes;
  const bool kick = options_.sync_kick_percent > 0 &&
                    placed_since_kick_ * 100 >= arena_.arena_bytes * options_.sync_kick_percent;
  if (kick) placed_since_kick_ = 0;
  return kick;
}

Status IntentLog::EncodeBatch(uint64_t guid, std::vector<PlannedBlock>* planned,
                              EncodedBatch* out) {
  // Every block is encoded first, each change's bytes copied once from
  // where they lie, and the held buffers let go of before any I/O: a txg
  // commit waits for that (encoding_), never for the device.
  Status s;
  out->buffers.reserve(planned->size());
  for (auto& [b, recs] : *planned) {
    out->records += recs.size();
    out->bytes += b.bytes;
    std::vector<format::LogRecordRef> refs;
    refs.reserve(recs.size());
    for (const Pending& p : recs) refs.push_back({&p.rec, p.data()});
    bool made = false;
    io::AlignedBuffer buf = buffers_.Take(b.bytes, &made);
    if (made) stats_.buffers_allocated->Add();
    s = format::EncodeLogBlockInto(guid, b.seq, refs, {buf.data(), b.bytes});
    out->buffers.push_back(std::move(buf));
    if (!s.ok()) break;
  }
  for (const PlannedBlock& p : *planned) out->targets.push_back(p.block);
  planned->clear();
  MutexLock l(&mu_);
  if (--encoding_ == 0) encoded_cv_.SignalAll();
  return s;
}

Status IntentLog::WriteBatch(const format::IntentLogHeader& arena, EncodedBatch* encoded) {
  // Blocks placed one after another in the arena (all of a batch's, unless
  // it wrapped to offset 0) go out as one vectored write: one device
  // request, not one per block each waiting for the one before. A batch
  // that is one request is written with FUA: durable when the write
  // completes, no flush after it.
  const std::vector<Block>& targets = encoded->targets;
  std::vector<io::IoRequest> writes;
  for (size_t k = 0; k < targets.size(); k++) {
    const uint64_t offset = arena.arena_offset_bytes + targets[k].offset;
    const io::IoVec v{encoded->buffers[k].data(), targets[k].bytes};
    if (!writes.empty()) {
      io::IoRequest& last = writes.back();
      const uint64_t length = last.length();
      if (last.offset + length == offset && last.iov.size() < io::kMaxIoVecs &&
          length + v.size_bytes <= io::kMaxIoBytes) {
        last.iov.push_back(v);
        continue;
      }
    }
    io::IoRequest w{.op = io::IoOp::kWrite, .offset = offset, .iov = {v}};
    w.io_class = io::IoClass::kLogWrite;
    writes.push_back(std::move(w));
  }
  const bool fua = options_.use_fua && writes.size() == 1 && !options_.unsafe_skip_flush;
  const uint64_t io_start_ns = env_.clock->NowNs();
  Status s;
  for (size_t k = 0; s.ok() && k < writes.size(); k++) {
    writes[k].fua = fua;
    s = io::SubmitAndWait(*env_.device, std::move(writes[k]));
  }
  if (s.ok() && fua) {
    stats_.fua_writes->Add();
  } else if (s.ok() && !options_.unsafe_skip_flush) {
    s = io::FlushSync(*env_.device);
    stats_.flushes->Add();
  }
  encoded->io_ns = env_.clock->NowNs() - io_start_ns;
  return s;
}

Status IntentLog::ReleaseBatch(uint64_t id, const Status& s, const EncodedBatch& encoded,
                               BatchKind kind) {
  if (!s.ok()) {
    if (failed_.ok()) {
      failed_ = s.WithContext("intent log commit");
      if (env_.on_failure) env_.on_failure(failed_);
    }
    BatchDone(id);
    WakeAll();
    return failed_;
  }
  if (kind == BatchKind::kCommit) {  // the others release nobody: gathering goes by commits
    last_io_ns_ = encoded.io_ns;
    // The callers this batch releases: at most one per record, at most
    // every caller in Commit now (one caller's many writes are one caller).
    released_callers_ = std::min<uint64_t>(encoded.records, committers_);
    appends_since_release_ = 0;
  }
  stats_.commits->Add();
  stats_.records->Add(encoded.records);
  stats_.bytes->Add(encoded.bytes);
  stats_.blocks->Add(encoded.targets.size());
  stats_.batch_records->Record(encoded.records);
  BatchDone(id);
  AskWriterIfDue();  // changes appended while it was in flight
  return Status::Ok();
}

bool IntentLog::has_arena() {
  MutexLock l(&mu_);
  return arena_.present();
}

void IntentLog::SetArena(uint64_t offset_bytes, uint64_t bytes) {
  MutexLock l(&mu_);
  arena_.arena_offset_bytes = offset_bytes;
  arena_.arena_bytes = bytes;
  blocks_.clear();
  blocks_bytes_ = 0;
  next_offset_ = 0;
}

format::IntentLogHeader IntentLog::HeaderFor(uint64_t txg) {
  MutexLock l(&mu_);
  format::IntentLogHeader h;
  if (!arena_.present()) return h;
  h.arena_offset_bytes = arena_.arena_offset_bytes;
  h.arena_bytes = arena_.arena_bytes;
  for (const Block& b : blocks_) {
    if (b.max_txg > txg) {
      h.log_guid = b.guid;
      h.replay_offset_bytes = b.offset;
      h.replay_sequence = b.seq;
      return h;
    }
  }
  h.log_guid = guid_;
  // The next block goes at next_offset_, or at 0 when it does not fit; a
  // header must name a place inside the arena.
  h.replay_offset_bytes = next_offset_ < arena_.arena_bytes ? next_offset_ : 0;
  h.replay_sequence = next_seq_;
  return h;
}

void IntentLog::TxgCommitted(uint64_t txg, const format::IntentLogHeader& header) {
  MutexLock l(&mu_);
  committed_txg_ = std::max(committed_txg_, txg);
  std::erase_if(pending_, [&](const Pending& p) { return p.rec.txg <= txg; });
  pending_bytes_ = pending_copy_bytes_ = 0;
  for (const Pending& p : pending_) {
    pending_bytes_ += p.rec.EncodedBytes();
    if (p.copy) pending_copy_bytes_ += p.rec.EncodedBytes();
  }
  // The volumes publish txg's buffers next: a batch still copying held ones
  // lets go of them first.
  while (encoding_ > 0) encoded_cv_.Wait(&mu_);
  if (overflowed_ && overflow_txg_ <= txg) {
    overflowed_ = false;
    overflowed_hint_.store(false, std::memory_order_relaxed);
  }
  if (header.present()) {
    // A fallback open may use any of the newest three uberblocks: keep
    // every block the oldest of them replays from.
    recent_starts_.push_back(header.replay_sequence);
    if (recent_starts_.size() > 3) recent_starts_.pop_front();
    // A block whose write may still be in flight is kept too: reusing its
    // space could let that late write land on a newer block.
    const uint64_t floor = recent_starts_.front();
    while (!blocks_.empty() && blocks_.front().seq < floor &&
           BatchFinished(blocks_.front().batch)) {
      blocks_bytes_ -= blocks_.front().bytes;
      blocks_.pop_front();
    }
  }
  UpdateGauges();
}

void IntentLog::UpdateGauges() {
  stats_.arena_used_bytes->Set(static_cast<int64_t>(blocks_bytes_));
  stats_.copy_bytes->Set(static_cast<int64_t>(uint64_t{copies_.chunks()} * CopyArena::kChunkBytes));
  stats_.pending_bytes->Set(static_cast<int64_t>(pending_bytes_));
}

uint64_t IntentLog::last_seq() {
  MutexLock l(&mu_);
  return last_itx_;
}

uint64_t IntentLog::arena_used_bytes() {
  MutexLock l(&mu_);
  return blocks_bytes_;
}

}  // namespace arcstore::zil
