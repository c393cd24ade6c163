// FakeBlockStore: an in-memory pool store for unit tests of the volume
// engine (src/volume/), standing in for the pool's BlockReader and
// TxgWriter (pool/block_io.h).
//
// It is a BlockSource (verified reads), a RecordSink and so a BlockSink
// (a txg's writes and frees). Every block written gets a pointer of its
// own (a fresh offset, never reused) whose checksum covers the stored
// bytes; a read finds the bytes by offset and verifies them against the
// pointer it is given, as the real reader does, so a pointer that does not
// name what was written reads as Corruption, never as data.
//
//   store.BeginTxg(5);                       // births of what is written now
//   bp = store.WriteRecord(base, bytes, n);  // a record of txg 5
//   store.ReadBlockInto(bp, out);            // the bytes, verified
//   store.FreeBlock(bp);                     // counted; a second free is bad
//
// Faults: FailNextReads / FailNextWrites return an error instead;
// CorruptBlock flips a stored byte (reads of it give Corruption). Gates:
// read_gate() / write_gate() stop the next read or record write until the
// test releases it, so a test can make an interleaving happen without
// sleeping. counts() gives the traffic, split by block type.
//
// Freed blocks keep their bytes (the real allocator defers reuse too), and
// a read of one is counted (reads_of_freed). SetReuseFreedAfterTxgs makes
// them read as other bytes once the allocator could have reused them.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/thread_annotations.h"
#include "format/block_pointer.h"
#include "volume/volume_impl.h"

namespace arcstore::testing {

// Stops one operation until released. Arm() it; the next operation that
// passes it (Pass()) waits there; WaitArrived() returns once one does;
// Release() lets it go on. Each Arm() stops exactly one operation.
class Gate {
 public:
  void Arm() {
    MutexLock l(&mu_);
    armed_ = true;
    arrived_ = false;
    released_ = false;
  }
  void WaitArrived() {
    MutexLock l(&mu_);
    while (!arrived_) cv_.Wait(&mu_);
  }
  void Release() {
    MutexLock l(&mu_);
    released_ = true;
    cv_.SignalAll();
  }
  // Called by the gated operation.
  void Pass() {
    MutexLock l(&mu_);
    if (!armed_) return;
    armed_ = false;
    arrived_ = true;
    cv_.SignalAll();
    while (!released_) cv_.Wait(&mu_);
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool armed_ ARC_GUARDED_BY(mu_) = false;
  bool arrived_ ARC_GUARDED_BY(mu_) = false;
  bool released_ ARC_GUARDED_BY(mu_) = false;
};

class FakeBlockStore final : public volume::BlockSource, public volume::RecordSink {
 public:
  struct Counts {
    uint64_t data_reads = 0;      // reads of data records (demand and prefetch)
    uint64_t prefetch_reads = 0;  // ... of them through PrefetchBlockInto
    uint64_t indirect_reads = 0;  // reads of indirect blocks
    uint64_t failed_reads = 0;    // reads that returned an error
    uint64_t reads_of_freed = 0;  // reads of a block already freed
    uint64_t reused_blocks = 0;   // freed blocks overwritten (SetReuseFreedAfterTxgs)
    uint64_t record_writes = 0;   // WriteRecord calls that stored a block
    uint64_t block_writes = 0;    // WriteBlock calls (indirect blocks)
    uint64_t data_frees = 0;      // frees of data records
    uint64_t indirect_frees = 0;  // frees of indirect blocks
    uint64_t bad_frees = 0;       // frees of a block never written or freed twice
    uint64_t undirty_bytes = 0;   // sum of WriteRecord's undirty_bytes
  };

  // Blocks written from now on are born in `txg`. With reuse on, blocks
  // freed `reuse_after_txgs` or more txgs before `txg` are overwritten now.
  void BeginTxg(uint64_t txg) {
    MutexLock l(&mu_);
    txg_ = txg;
    if (reuse_after_txgs_ == 0) return;
    for (auto& [offset, b] : blocks_) {
      if (b.freed && !b.reused && txg > b.freed_txg + reuse_after_txgs_) {
        for (uint8_t& byte : b.bytes) byte = static_cast<uint8_t>(~byte);
        b.reused = true;
        counts_.reused_blocks++;
      }
    }
  }
  // Models the allocator's deferred frees (space/allocator.h, defer_txgs):
  // frees of txg T may be reused by the writes of txg T + defer + 1, so a
  // block freed in T reads as other bytes (Corruption) from then on.
  // 0 (the default): freed blocks keep their bytes.
  void SetReuseFreedAfterTxgs(uint32_t defer) {
    MutexLock l(&mu_);
    reuse_after_txgs_ = defer;
  }
  // Called with each WriteRecord's undirty_bytes (the pool undirties the
  // txg manager as writes complete).
  void SetOnWritten(std::function<void(uint64_t txg, uint64_t bytes)> fn) {
    MutexLock l(&mu_);
    on_written_ = std::move(fn);
  }

  // ---- BlockSource -------------------------------------------------------
  Result<std::vector<uint8_t>> ReadBlock(const format::BlockPointer& bp) override {
    std::vector<uint8_t> out(bp.logical_bytes);
    ARC_RETURN_IF_ERROR(Read(bp, out, /*prefetch=*/false));
    return out;
  }
  Status ReadBlockInto(const format::BlockPointer& bp, std::span<uint8_t> out) override {
    return Read(bp, out, /*prefetch=*/false);
  }
  Status PrefetchBlockInto(const format::BlockPointer& bp, std::span<uint8_t> out) override {
    return Read(bp, out, /*prefetch=*/true);
  }

  // ---- BlockSink / RecordSink ---------------------------------------------
  Result<format::BlockPointer> WriteBlock(const format::BlockPointer& base,
                                          std::span<const uint8_t> logical) override {
    return Store(base, logical, /*record=*/false, 0);
  }
  Result<format::BlockPointer> WriteRecord(const format::BlockPointer& base,
                                           std::span<const uint8_t> logical,
                                           uint64_t undirty_bytes) override {
    write_gate_.Pass();
    return Store(base, logical, /*record=*/true, undirty_bytes);
  }
  Status FreeBlock(const format::BlockPointer& bp) override {
    if (!bp.OwnsSpace()) return Status::Ok();  // holes and zeros own nothing
    MutexLock l(&mu_);
    auto it = blocks_.find(bp.offset_units);
    if (it == blocks_.end() || it->second.freed || it->second.bp != bp) {
      counts_.bad_frees++;
      return Status::Internal(
          "fake store: free of " + bp.ToString() +
          (it == blocks_.end() ? ", never written" : ", freed or not this block"));
    }
    it->second.freed = true;
    it->second.freed_txg = txg_;
    (bp.type == format::BlockType::kIndirect ? counts_.indirect_frees : counts_.data_frees)++;
    return Status::Ok();
  }

  // ---- Faults and gates -----------------------------------------------------
  // The next `n` reads fail with `error` (and are counted as failed).
  void FailNextReads(int n, Status error) {
    MutexLock l(&mu_);
    failing_reads_ = n;
    read_error_ = std::move(error);
  }
  // After `skip` more record or block writes succeed, the next `n` fail
  // with `error`.
  void FailNextWrites(int n, Status error, int skip = 0) {
    MutexLock l(&mu_);
    failing_writes_ = n;
    skip_writes_ = skip;
    write_error_ = std::move(error);
  }
  // Flips a byte of the stored block `bp` (its checksum then mismatches).
  void CorruptBlock(const format::BlockPointer& bp) {
    MutexLock l(&mu_);
    auto it = blocks_.find(bp.offset_units);
    if (it != blocks_.end() && !it->second.bytes.empty()) it->second.bytes[0] ^= 0xff;
  }
  Gate& read_gate() { return read_gate_; }
  Gate& write_gate() { return write_gate_; }

  // ---- Inspection -----------------------------------------------------------
  Counts counts() {
    MutexLock l(&mu_);
    return counts_;
  }
  // Blocks written and not freed, of `type`.
  size_t LiveBlocks(format::BlockType type) {
    MutexLock l(&mu_);
    size_t n = 0;
    for (const auto& [offset, b] : blocks_) n += !b.freed && b.bp.type == type;
    return n;
  }

 private:
  struct Block {
    format::BlockPointer bp;
    std::vector<uint8_t> bytes;
    bool freed = false;
    uint64_t freed_txg = 0;
    bool reused = false;  // overwritten (SetReuseFreedAfterTxgs)
  };

  Status Read(const format::BlockPointer& bp, std::span<uint8_t> out, bool prefetch) {
    read_gate_.Pass();
    MutexLock l(&mu_);
    const bool data = bp.type == format::BlockType::kData;
    (data ? counts_.data_reads : counts_.indirect_reads)++;
    if (prefetch) counts_.prefetch_reads++;
    if (failing_reads_ > 0) {
      failing_reads_--;
      counts_.failed_reads++;
      return read_error_;
    }
    auto it = blocks_.find(bp.offset_units);
    if (it == blocks_.end()) {
      counts_.failed_reads++;
      return Status::IOError("fake store: nothing was written at " + bp.ToString());
    }
    if (it->second.freed) counts_.reads_of_freed++;
    Status s = format::VerifyBlock(bp, it->second.bytes);
    if (s.ok() && out.size() != it->second.bytes.size()) {
      s = Status::Corruption("fake store: " + bp.ToString() + " holds " +
                             std::to_string(it->second.bytes.size()) + " bytes, asked for " +
                             std::to_string(out.size()));
    }
    if (!s.ok()) {
      counts_.failed_reads++;
      return s;
    }
    std::copy(it->second.bytes.begin(), it->second.bytes.end(), out.begin());
    return Status::Ok();
  }

  Result<format::BlockPointer> Store(format::BlockPointer base, std::span<const uint8_t> logical,
                                     bool record, uint64_t undirty_bytes) {
    std::function<void(uint64_t, uint64_t)> on_written;
    uint64_t txg = 0;
    format::BlockPointer bp;
    {
      MutexLock l(&mu_);
      if (failing_writes_ > 0 && skip_writes_ > 0) {
        skip_writes_--;
      } else if (failing_writes_ > 0) {
        failing_writes_--;
        return write_error_;
      }
      // Stored as given: no compression, so physical bytes = logical ones.
      base.compression = format::Compression::kOff;
      base.birth_txg = txg_;
      bp = format::PointerTo(base, 0, next_offset_++, logical,
                             static_cast<uint32_t>(logical.size()));
      blocks_[bp.offset_units] = Block{bp, std::vector<uint8_t>(logical.begin(), logical.end())};
      (record ? counts_.record_writes : counts_.block_writes)++;
      counts_.undirty_bytes += undirty_bytes;
      on_written = on_written_;
      txg = txg_;
    }
    if (record && on_written) on_written(txg, undirty_bytes);
    return bp;
  }

  Gate read_gate_, write_gate_;
  Mutex mu_;
  std::map<uint64_t, Block> blocks_ ARC_GUARDED_BY(mu_);  // by offset
  uint64_t next_offset_ ARC_GUARDED_BY(mu_) = 1;
  uint64_t txg_ ARC_GUARDED_BY(mu_) = 0;
  uint32_t reuse_after_txgs_ ARC_GUARDED_BY(mu_) = 0;
  Counts counts_ ARC_GUARDED_BY(mu_);
  int failing_reads_ ARC_GUARDED_BY(mu_) = 0;
  Status read_error_ ARC_GUARDED_BY(mu_);
  int failing_writes_ ARC_GUARDED_BY(mu_) = 0;
  int skip_writes_ ARC_GUARDED_BY(mu_) = 0;
  Status write_error_ ARC_GUARDED_BY(mu_);
  std::function<void(uint64_t, uint64_t)> on_written_ ARC_GUARDED_BY(mu_);
};

}  // namespace arcstore::testing
