#include "pool/block_io.h"

#include <cstring>

#include "base/check.h"
#include "base/clock.h"

namespace arcstore::pool {

using format::BlockPointer;

io::IoQueueOptions QueueOptionsFrom(const PoolIoOptions& o) {
  io::IoQueueOptions q;
  auto set = [&](io::IoClass c, const IoClassActive& a) {
    q.limits[static_cast<int>(c)] = io::IoClassLimits{a.min_active, a.max_active};
  };
  set(io::IoClass::kSyncRead, o.sync_read);
  set(io::IoClass::kSyncWrite, o.sync_write);
  set(io::IoClass::kAsyncRead, o.async_read);
  set(io::IoClass::kAsyncWrite, o.async_write);
  set(io::IoClass::kLogWrite, o.log_write);
  q.max_active_total = o.max_active_total;
  q.read_gap_limit_bytes = o.read_gap_limit_bytes;
  q.read_aggregation_limit_bytes = o.read_aggregation_limit_bytes;
  return q;
}

BlockIoStats::BlockIoStats(stats::Registry* r)
    : reads(r->AddCounter("io", "reads", stats::Unit::kOps, "block reads")),
      read_bytes(r->AddCounter("io", "read_bytes", stats::Unit::kBytes, "bytes read")),
      writes(r->AddCounter("io", "writes", stats::Unit::kOps, "device writes (aggregated)")),
      write_bytes(r->AddCounter("io", "write_bytes", stats::Unit::kBytes, "bytes written")),
      blocks_written(r->AddCounter("io", "blocks_written", stats::Unit::kOps,
                                   "blocks written (before aggregation)")),
      checksum_errors(r->AddCounter("io", "checksum_errors", stats::Unit::kOps,
                                    "blocks whose checksum did not verify")),
      compress_skipped(r->AddCounter("io", "compress_skipped", stats::Unit::kOps,
                                     "data records stored raw without a compression try: "
                                     "the records before them did not compress")),
      read_buffers_made(r->AddCounter("io", "read_buffers_made", stats::Unit::kOps,
                                      "block read buffers made, not reused")),
      write_buffers_made(r->AddCounter("io", "write_buffers_made", stats::Unit::kOps,
                                       "block write buffers made, not reused")),
      holes_filled_bytes(r->AddCounter("io", "holes_filled_bytes", stats::Unit::kBytes,
                                       "zeros written into the holes of a sparse pool file under "
                                       "the intent log's arena, so that commits allocate nothing")),
      write_size_bytes(r->AddHistogram("io", "write_size_bytes", stats::Unit::kBytes,
                                       "size of each device write (aggregated)")),
      block_size_bytes(r->AddHistogram("io", "block_size_bytes", stats::Unit::kBytes,
                                       "size of each block written (individual)")),
      read_latency_ns(r->AddHistogram("io", "read_latency_ns", stats::Unit::kNanoseconds,
                                      "device read latency")),
      write_latency_ns(r->AddHistogram("io", "write_latency_ns", stats::Unit::kNanoseconds,
                                       "device write latency")) {}

namespace {

uint64_t RoundUp(uint64_t v, uint64_t unit) { return (v + unit - 1) / unit * unit; }

// Incompressible streaks (the header's comment): after this many records in
// a row stored raw, one in kRawProbeEvery is tried.
constexpr uint64_t kRawStreakRecords = 32;
constexpr uint64_t kRawProbeEvery = 16;

}  // namespace

BlockReader::BlockReader(io::Device* device, uint32_t unit_bytes, BlockIoStats* stats)
    : device_(device),
      unit_bytes_(unit_bytes),
      stats_(stats),
      buffers_(io::BufferAlignmentFor(*device), kSpareReadBuffers, kMaxSpareReadBufferBytes) {}

Status BlockReader::ReadDevice(const BlockPointer& bp, std::span<uint8_t> into, io::IoClass cls) {
  const uint64_t start = DefaultClock()->NowNs();
  Status s = io::ReadSync(*device_, bp.offset_units * unit_bytes_, into, cls);
  stats_->read_latency_ns->Record(DefaultClock()->NowNs() - start);
  stats_->reads->Add();
  stats_->read_bytes->Add(into.size());
  if (!s.ok()) return s.WithContext("reading " + bp.ToString());
  return s;
}

Result<io::AlignedBuffer> BlockReader::ReadPhysical(const BlockPointer& bp, io::IoClass cls) {
  if (bp.IsHole()) return Status::InvalidArgument("read of " + bp.ToString() + ": no data");
  const uint64_t len = bp.AllocatedBytes(unit_bytes_);
  bool made = false;
  io::AlignedBuffer buf = buffers_.Take(len, &made);
  if (made) stats_->read_buffers_made->Add();
  Status s = ReadDevice(bp, buf.span().first(len), cls);
  if (!s.ok()) {
    buffers_.Give(std::move(buf));
    return s;
  }
  return buf;
}

Result<std::vector<uint8_t>> BlockReader::ReadBlock(const BlockPointer& bp) {
  ARC_ASSIGN_OR_RETURN(io::AlignedBuffer buf, ReadPhysical(bp, io::IoClass::kSyncRead));
  Result<std::vector<uint8_t>> r =
      format::ReadBlockPayload(bp, std::span<const uint8_t>(buf.data(), bp.physical_bytes));
  buffers_.Give(std::move(buf));
  if (!r.ok() && r.status().code() == StatusCode::kCorruption) stats_->checksum_errors->Add();
  return r;
}

Status BlockReader::ReadBlockInto(const BlockPointer& bp, std::span<uint8_t> out) {
  return ReadInto(bp, out, io::IoClass::kSyncRead);
}

Status BlockReader::PrefetchBlockInto(const BlockPointer& bp, std::span<uint8_t> out) {
  return ReadInto(bp, out, io::IoClass::kAsyncRead);
}

// A block stored as it is (no compression) whose allocated bytes are
// exactly `out`, in memory the device can read into, goes straight there:
// no buffer and no copy. On a bad checksum `out` holds the bad bytes; the
// caller drops them with the error (an ARC fill is abandoned).
bool BlockReader::ReadsInPlace(const BlockPointer& bp, std::span<uint8_t> out) const {
  return bp.compression == format::Compression::kOff && !bp.IsHole() &&
         bp.physical_bytes == out.size() && bp.AllocatedBytes(unit_bytes_) == out.size() &&
         reinterpret_cast<uintptr_t>(out.data()) % buffers_.alignment() == 0;
}

Status BlockReader::ReadInto(const BlockPointer& bp, std::span<uint8_t> out, io::IoClass cls) {
  if (out.size() != bp.logical_bytes) {
    return Status::Corruption("block " + bp.ToString() + " holds " +
                              std::to_string(bp.logical_bytes) + " bytes, expected " +
                              std::to_string(out.size()));
  }
  if (ReadsInPlace(bp, out)) {
    ARC_RETURN_IF_ERROR(ReadDevice(bp, out, cls));
    Status s = format::VerifyBlock(bp, out);
    if (!s.ok()) stats_->checksum_errors->Add();
    return s;
  }
  ARC_ASSIGN_OR_RETURN(io::AlignedBuffer buf, ReadPhysical(bp, cls));
  std::span<const uint8_t> physical(buf.data(), bp.physical_bytes);
  Status s = format::VerifyBlock(bp, physical);
  if (!s.ok()) {
    stats_->checksum_errors->Add();
  } else {
    s = format::DecompressBlock(bp.compression, physical, out);
    if (!s.ok()) s = s.WithContext("block " + bp.ToString());
  }
  buffers_.Give(std::move(buf));
  return s;
}

// One block of a run.
struct TxgWriter::RunPiece {
  // Holds at least length_bytes (a compressed block leaves unused room at
  // its end, which is not written); empty when `borrowed` is the data.
  io::AlignedBuffer buffer;
  // A stored record written from its owner's memory (WriteStable).
  const uint8_t* borrowed = nullptr;
  uint64_t length_bytes = 0;
  uint64_t undirty_bytes = 0;
  const uint8_t* bytes() const { return borrowed != nullptr ? borrowed : buffer.data(); }
};

// Physically adjacent blocks: the run being built, or one vectored I/O.
struct TxgWriter::Run {
  using Piece = RunPiece;
  space::Extent extent;
  std::vector<Piece> pieces;
  uint64_t undirty_bytes = 0;

  void Append(Piece p) {
    extent.length_bytes += p.length_bytes;
    undirty_bytes += p.undirty_bytes;
    pieces.push_back(std::move(p));
  }
};

TxgWriter::TxgWriter(io::Device* device, space::SpaceAllocator* allocator, uint64_t txg,
                     const TxgWriterOptions& options, BlockIoStats* stats, io::BufferCache* buffers,
                     std::function<void(uint64_t)> on_written)
    : device_(device),
      allocator_(allocator),
      txg_(txg),
      options_(options),
      unit_bytes_(static_cast<uint32_t>(allocator->options().unit_bytes)),
      stats_(stats),
      buffers_(buffers),
      on_written_(std::move(on_written)) {
  ARC_CHECK(buffers->alignment() >= io::BufferAlignmentFor(*device));
}

TxgWriter::~TxgWriter() { (void)Finish(); }

Result<BlockPointer> TxgWriter::WriteBlock(const BlockPointer& base,
                                           std::span<const uint8_t> logical) {
  return Write(base, logical, space::AllocClass::kMetadata, 0);
}

Result<BlockPointer> TxgWriter::Write(const BlockPointer& base, std::span<const uint8_t> logical,
                                      space::AllocClass cls, uint64_t undirty_bytes) {
  ARC_ASSIGN_OR_RETURN(format::Compressed c,
                       compressor_.CompressBlock(base.compression, logical, Scratch(logical.size()),
                                                 format::kDefaultZstdLevel, unit_bytes_));
  return Place(base, logical.size(), c, cls,
               Run::Piece{PhysicalCopy(c.physical_bytes), nullptr, 0, undirty_bytes});
}

std::span<uint8_t> TxgWriter::Scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_ = io::AlignedBuffer(bytes, 64);
  return scratch_.span().first(bytes);
}

// The compressor's output is copied into a buffer of its own rounded size:
// a block holds its buffer until its write completes, and a buffer the
// size of the record would hold (and keep from the cache) 4 times the
// bytes of a record that compressed 4:1.
io::AlignedBuffer TxgWriter::PhysicalCopy(size_t physical_bytes) {
  const size_t bytes = RoundUp(physical_bytes, unit_bytes_);
  bool made = false;
  io::AlignedBuffer buf = buffers_->Take(bytes, &made);
  if (made) stats_->write_buffers_made->Add();
  std::memcpy(buf.data(), scratch_.data(), physical_bytes);
  // The padding is written too: zeros, not what a reused buffer held.
  std::memset(buf.data() + physical_bytes, 0, bytes - physical_bytes);
  return buf;
}

// A record stored as it is (it does not compress, or compression is off) is
// sent to the device from the caller's memory: no copy into a buffer of its
// own, which for a 128 KiB record is a mapping, 32 page faults with their
// zeroing, the copy, and an unmap. The device needs the memory aligned and
// the record a whole number of units (no padding to zero); otherwise, and
// for compressed records, the bytes go through a buffer as in Write.
Result<BlockPointer> TxgWriter::WriteStable(const BlockPointer& base,
                                            std::span<const uint8_t> logical, space::AllocClass cls,
                                            uint64_t undirty_bytes) {
  const bool in_place =
      logical.size() % unit_bytes_ == 0 &&
      reinterpret_cast<uintptr_t>(logical.data()) % io::BufferAlignmentFor(*device_) == 0;
  if (!in_place) return Write(base, logical, cls, undirty_bytes);
  // A record of one unit cannot save space by compressing (the format's
  // rule): no try, and it says nothing about the streak.
  const bool may_pay =
      base.compression != format::Compression::kOff && logical.size() > unit_bytes_;
  const bool probe =
      raw_streak_ < kRawStreakRecords || (raw_streak_ - kRawStreakRecords) % kRawProbeEvery == 0;
  format::Compressed c{format::Compression::kOff, static_cast<uint32_t>(logical.size())};
  if (may_pay && !probe) {
    stats_->compress_skipped->Add();
  } else if (may_pay) {
    ARC_ASSIGN_OR_RETURN(
        c, compressor_.TryCompressBlock(base.compression, logical, Scratch(logical.size()),
                                        format::kDefaultZstdLevel, unit_bytes_));
  }
  if (may_pay) raw_streak_ = c.used == format::Compression::kOff ? raw_streak_ + 1 : 0;
  if (c.used == format::Compression::kOff) {
    return Place(base, logical.size(), c, cls, Run::Piece{{}, logical.data(), 0, undirty_bytes});
  }
  return Place(base, logical.size(), c, cls,
               Run::Piece{PhysicalCopy(c.physical_bytes), nullptr, 0, undirty_bytes});
}

// Allocates the block's space, makes its pointer and queues `piece` (whose
// bytes() hold the physical bytes) for writing.
Result<BlockPointer> TxgWriter::Place(const BlockPointer& base, size_t logical_bytes,
                                      const format::Compressed& c, space::AllocClass cls,
                                      RunPiece piece) {
  ARC_ASSIGN_OR_RETURN(space::Extent extent, allocator_->Allocate(c.physical_bytes, cls, txg_));
  BlockPointer bp = base;
  bp.compression = c.used;
  bp.birth_txg = txg_;
  bp = format::PointerTo(bp, 0, extent.offset_bytes / unit_bytes_,
                         std::span<const uint8_t>(piece.bytes(), c.physical_bytes),
                         static_cast<uint32_t>(logical_bytes));
  stats_->block_size_bytes->Record(extent.length_bytes);
  stats_->blocks_written->Add();
  piece.length_bytes = extent.length_bytes;
  Queue(extent, std::move(piece));
  return bp;
}

Status TxgWriter::WriteAt(const space::Extent& extent, io::AlignedBuffer physical) {
  if (physical.size() < extent.length_bytes) {
    return Status::Internal("write of " + std::to_string(physical.size()) +
                            " bytes into an extent of " + std::to_string(extent.length_bytes));
  }
  stats_->blocks_written->Add();
  stats_->block_size_bytes->Record(extent.length_bytes);
  Queue(extent, Run::Piece{std::move(physical), nullptr, extent.length_bytes, 0});
  return Status::Ok();
}

space::Extent TxgWriter::ExtentOf(const BlockPointer& bp) const {
  return space::Extent{bp.offset_units * unit_bytes_, bp.AllocatedBytes(unit_bytes_)};
}

Status TxgWriter::FreeBlock(const BlockPointer& bp) {
  if (!bp.OwnsSpace()) return Status::Ok();
  Status s = allocator_->Free(ExtentOf(bp), txg_);
  // The message only on failure: every txg frees a block per record it
  // rewrites, and formatting a message per free would be work on the sync
  // thread's hot path for nothing.
  if (!s.ok()) return s.WithContext("freeing " + bp.ToString());
  return s;
}

// A run grows while blocks are adjacent, up to two I/Os' worth: then its
// first I/O's worth is issued. When the run ends, SubmitRun cuts what is
// left evenly, so that a run of 1.25 MiB goes as two I/Os of 640 KiB, not
// 1 MiB and a small tail.
void TxgWriter::Queue(const space::Extent& extent, RunPiece piece) {
  if (!run_ || run_->extent.end_bytes() != extent.offset_bytes) {
    SubmitRun();
    run_ = std::make_unique<Run>();
    run_->extent = space::Extent{extent.offset_bytes, 0};
  } else if (run_->extent.length_bytes + extent.length_bytes >
                 2 * options_.aggregation_limit_bytes ||
             run_->pieces.size() >= 2 * io::kMaxIoVecs) {
    Issue(TakeFront(PiecesFitting()));
  }
  run_->Append(std::move(piece));
}

// How many of the run's first pieces fit in one I/O (at least one).
size_t TxgWriter::PiecesFitting() const {
  size_t n = 0;
  uint64_t bytes = 0;
  for (const Run::Piece& p : run_->pieces) {
    if (n > 0 &&
        (bytes + p.length_bytes > options_.aggregation_limit_bytes || n == io::kMaxIoVecs)) {
      break;
    }
    bytes += p.length_bytes;
    n++;
  }
  return n;
}

std::unique_ptr<TxgWriter::Run> TxgWriter::TakeFront(size_t n) {
  auto front = std::make_unique<Run>();
  front->extent = space::Extent{run_->extent.offset_bytes, 0};
  for (size_t i = 0; i < n; i++) front->Append(std::move(run_->pieces[i]));
  run_->pieces.erase(run_->pieces.begin(), run_->pieces.begin() + static_cast<ptrdiff_t>(n));
  run_->extent = space::Extent{front->extent.end_bytes(),
                               run_->extent.length_bytes - front->extent.length_bytes};
  run_->undirty_bytes -= front->undirty_bytes;
  return front;
}

void TxgWriter::SubmitRun() {
  while (run_ && !run_->pieces.empty()) {
    const size_t fitting = PiecesFitting();
    if (fitting == run_->pieces.size()) break;
    // Cut at the first block boundary past half of the run, or the one
    // before it when that I/O would be too long.
    size_t k = 0;
    uint64_t bytes = 0;
    while (k < run_->pieces.size() - 1 && 2 * bytes < run_->extent.length_bytes) {
      bytes += run_->pieces[k++].length_bytes;
    }
    Issue(TakeFront(std::max<size_t>(1, std::min(k, fitting))));
  }
  if (run_ && !run_->pieces.empty()) Issue(std::move(run_));
  run_.reset();
}

void TxgWriter::Issue(std::unique_ptr<Run> taken) {
  WaitInflight(options_.max_inflight_ios - 1);
  std::shared_ptr<Run> run(std::move(taken));
  io::IoRequest req;
  req.op = io::IoOp::kWrite;
  req.io_class = io::IoClass::kAsyncWrite;
  req.offset = run->extent.offset_bytes;
  for (Run::Piece& p : run->pieces) {
    // A write only reads its iovecs (a borrowed record is the caller's const memory).
    req.iov.push_back(io::IoVec{const_cast<uint8_t*>(p.bytes()), p.length_bytes});
  }
  req.parts = static_cast<uint32_t>(run->pieces.size());
  written_bytes_ += run->extent.length_bytes;
  device_writes_++;
  stats_->writes->Add();
  stats_->write_bytes->Add(run->extent.length_bytes);
  stats_->write_size_bytes->Record(run->extent.length_bytes);
  const uint64_t start = DefaultClock()->NowNs();
  {
    MutexLock l(&mu_);
    inflight_++;
  }
  req.done = [this, run, start](const Status& s) {
    stats_->write_latency_ns->Record(DefaultClock()->NowNs() - start);
    if (s.ok() && on_written_ && run->undirty_bytes > 0) on_written_(run->undirty_bytes);
    for (Run::Piece& p : run->pieces) {
      if (!p.buffer.empty()) buffers_->Give(std::move(p.buffer));
    }
    MutexLock l(&mu_);
    if (!s.ok() && first_error_.ok()) first_error_ = s;
    inflight_--;
    cv_.SignalAll();
  };
  device_->Submit(std::move(req));
}

void TxgWriter::WaitInflight(uint32_t at_most) {
  MutexLock l(&mu_);
  while (inflight_ > at_most) cv_.Wait(&mu_);
}

Status TxgWriter::Finish() {
  SubmitRun();
  WaitInflight(0);
  MutexLock l(&mu_);
  return first_error_;
}

}  // namespace arcstore::pool
