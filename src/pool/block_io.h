// Block I/O of a pool: reading verified blocks, and writing one txg's blocks
// with allocation, aggregation and deferred frees.
//
//   BlockReader  ReadBlock(bp): read the physical bytes, verify the
//                checksum, decompress. A mismatch is Corruption naming the
//                block, never data. The physical bytes go through buffers
//                kept for the next reads (io/buffer_cache.h): a fresh
//                mapping per read of 64 KiB or more, and its unmapping,
//                cost more than the read on a virtual machine (cold 64 KiB
//                random reads: 2.4k-3.1k -> 6.9k-7.5k a second). A block
//                stored uncompressed, read into memory the device can
//                read into (an ARC buffer), is read there directly.
//   TxgWriter    WriteBlock(base, logical): compress, allocate new space
//                (copy-on-write: never the block's old place), checksum,
//                queue the write; adjacent writes are merged into one
//                vectored I/O up to aggregation_limit_bytes (a longer run
//                is cut into I/Os of nearly equal size). FreeBlock(bp)
//                returns space to the allocator (deferred by it). Finish()
//                submits what is queued and waits for every write.
//                WriteStable(base, logical): the same for a txg's dirty
//                record, whose memory lives until the txg commits: a record
//                that is stored uncompressed is written from that memory
//                (zero copy) instead of through a buffer of its own.
//                Incompressible streaks: after kRawStreakRecords records in
//                a row that did not compress (media, encrypted, random
//                data), WriteStable tries only one in kRawProbeEvery; one
//                that compresses ends the streak. Such data costs no
//                compressor pass (or sample) per record; compressible data
//                after a streak is stored raw for at most kRawProbeEvery - 1
//                records (io.compress_skipped). The txg's writer keeps one
//                format::Compressor for all its blocks: contexts made once,
//                and no early-abort samples after a block that compressed.
//                Block buffers (compressed records, metadata) come from the
//                pool's write BufferCache and go back to it as their writes
//                complete: a fresh buffer of 64 KiB or more is a mapping
//                faulted in page by page and unmapped (a TLB shootdown) on
//                the completion thread, a cost paid per block written.
//                A block's buffer is its compressed size,
//                rounded to the unit (the compressor writes into a scratch
//                buffer first): a record-sized one would hold the record's
//                bytes at the device, not the block's.
//
// I/O classes (io/io_queue.h): BlockReader's demand reads are sync reads,
// its PrefetchBlockInto reads async reads; TxgWriter's writes are async
// writes that carry the number of blocks merged into them (IoRequest.parts).
//
// Thread-safety: BlockReader is thread-safe. A TxgWriter belongs to the sync
// thread of one txg; its completion callbacks may run on device threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "base/thread_annotations.h"
#include "format/block_pointer.h"
#include "format/compression.h"
#include "io/aligned_buffer.h"
#include "io/buffer_cache.h"
#include "arcstore/pool.h"
#include "io/device.h"
#include "io/io_queue.h"
#include "space/allocator.h"
#include "stats/registry.h"
#include "volume/block_tree.h"

namespace arcstore::pool {

// The device queue's options from the public ones.
io::IoQueueOptions QueueOptionsFrom(const PoolIoOptions& options);

// Counters of a pool's block traffic (module "io"). The device queue
// (io/io_queue.h) adds the per-class io.<class>_* stats beside them.
struct BlockIoStats {
  explicit BlockIoStats(stats::Registry* registry);
  stats::Counter* reads;
  stats::Counter* read_bytes;
  stats::Counter* writes;          // device writes (after aggregation)
  stats::Counter* write_bytes;
  stats::Counter* blocks_written;  // blocks before aggregation
  stats::Counter* checksum_errors;
  stats::Counter* compress_skipped;  // records stored raw untried (a raw streak)
  stats::Counter* read_buffers_made;   // BlockReader's buffers not reused
  stats::Counter* write_buffers_made;  // TxgWriter's buffers not reused
  stats::Counter* holes_filled_bytes;  // zeros written into a sparse file's holes
  stats::Histogram* write_size_bytes;       // per device write (aggregated)
  stats::Histogram* block_size_bytes;       // per block (individual)
  stats::Histogram* read_latency_ns;
  stats::Histogram* write_latency_ns;
};

class BlockReader final : public volume::BlockSource {
 public:
  BlockReader(io::Device* device, uint32_t unit_bytes, BlockIoStats* stats);
  Result<std::vector<uint8_t>> ReadBlock(const format::BlockPointer& bp) override;
  // Reads the logical bytes of `bp` into `out` (exactly bp.logical_bytes).
  Status ReadBlockInto(const format::BlockPointer& bp, std::span<uint8_t> out) override;
  // ReadBlockInto as an async (prefetch) read.
  Status PrefetchBlockInto(const format::BlockPointer& bp, std::span<uint8_t> out) override;

 private:
  // The block's allocated bytes read into a buffer of `buffers_` (at
  // least that long); the caller gives it back.
  Result<io::AlignedBuffer> ReadPhysical(const format::BlockPointer& bp, io::IoClass cls);
  // The block's allocated bytes read into `into` (exactly that long), counted.
  Status ReadDevice(const format::BlockPointer& bp, std::span<uint8_t> into, io::IoClass cls);
  bool ReadsInPlace(const format::BlockPointer& bp, std::span<uint8_t> out) const;
  Status ReadInto(const format::BlockPointer& bp, std::span<uint8_t> out, io::IoClass cls);
  io::Device* const device_;
  const uint32_t unit_bytes_;
  BlockIoStats* const stats_;
  // Physical bytes of the reads in progress: at most kSpareReadBuffers kept
  // between reads, each at most kMaxSpareReadBufferBytes (the largest
  // record, 1 MiB, with room for its rounding).
  static constexpr size_t kSpareReadBuffers = 8;
  static constexpr size_t kMaxSpareReadBufferBytes = 2u << 20;
  io::BufferCache buffers_;
};

struct TxgWriterOptions {
  uint64_t aggregation_limit_bytes = 1024 * 1024;
  uint32_t max_inflight_ios = 32;
};

class TxgWriter final : public volume::BlockSink {
 public:
  // `on_written(bytes)` is called as writes complete with the sum of the
  // `undirty_bytes` of their blocks (the throttle's record-by-record
  // release); it may run on a device thread.
  // `buffers`: where block buffers come from and go back to (outlives the
  // writer; its alignment at least the device's).
  TxgWriter(io::Device* device, space::SpaceAllocator* allocator, uint64_t txg,
            const TxgWriterOptions& options, BlockIoStats* stats, io::BufferCache* buffers,
            std::function<void(uint64_t bytes)> on_written);
  ~TxgWriter() override;

  Result<format::BlockPointer> WriteBlock(const format::BlockPointer& base,
                                          std::span<const uint8_t> logical) override;
  // WriteBlock with the allocation class and the dirty bytes it cleans.
  Result<format::BlockPointer> Write(const format::BlockPointer& base,
                                     std::span<const uint8_t> logical, space::AllocClass cls,
                                     uint64_t undirty_bytes);
  // Write for bytes that stay valid and unchanged until Finish() returns
  // (a txg's dirty records): a record stored as it is goes to the device
  // from `logical` itself, without a copy.
  Result<format::BlockPointer> WriteStable(const format::BlockPointer& base,
                                           std::span<const uint8_t> logical,
                                           space::AllocClass cls, uint64_t undirty_bytes);
  // Writes the first extent.length_bytes of `physical` at `extent`, for
  // blocks whose place was allocated beforehand (the space log).
  Status WriteAt(const space::Extent& extent, io::AlignedBuffer physical);
  Status FreeBlock(const format::BlockPointer& bp) override;
  space::Extent ExtentOf(const format::BlockPointer& bp) const;
  // Submits the queued run and waits for every write of the txg.
  Status Finish();

  uint64_t written_bytes() const { return written_bytes_; }
  uint64_t device_writes() const { return device_writes_; }
  uint64_t txg() const { return txg_; }

 private:
  struct Run;
  struct RunPiece;
  // The first `bytes` of scratch_ (grown to hold them): the compressor's
  // output.
  std::span<uint8_t> Scratch(size_t bytes);
  // The first `physical_bytes` of scratch_ in a buffer from buffers_.
  io::AlignedBuffer PhysicalCopy(size_t physical_bytes);
  Result<format::BlockPointer> Place(const format::BlockPointer& base, size_t logical_bytes,
                                     const format::Compressed& c, space::AllocClass cls,
                                     RunPiece piece);
  void Queue(const space::Extent& extent, RunPiece piece);
  void SubmitRun();
  size_t PiecesFitting() const;
  std::unique_ptr<Run> TakeFront(size_t pieces);
  void Issue(std::unique_ptr<Run> run);
  void WaitInflight(uint32_t at_most) ARC_EXCLUDES(mu_);

  io::Device* const device_;
  space::SpaceAllocator* const allocator_;
  const uint64_t txg_;
  const TxgWriterOptions options_;
  const uint32_t unit_bytes_;
  BlockIoStats* const stats_;
  io::BufferCache* const buffers_;
  const std::function<void(uint64_t)> on_written_;
  std::unique_ptr<Run> run_;  // the run being built (sync thread only)
  io::AlignedBuffer scratch_;  // the compressor's output (sync thread only)
  format::Compressor compressor_;  // sync thread only
  uint64_t raw_streak_ = 0;    // WriteStable's records in a row stored raw (sync thread only)
  uint64_t written_bytes_ = 0;
  uint64_t device_writes_ = 0;

  Mutex mu_;
  CondVar cv_;
  uint32_t inflight_ ARC_GUARDED_BY(mu_) = 0;
  Status first_error_ ARC_GUARDED_BY(mu_);
};

}  // namespace arcstore::pool
