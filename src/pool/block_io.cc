#include "pool/block_io.h"

#include "base/clock.h"
#include "format/compression.h"

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

}  // namespace

BlockReader::BlockReader(io::Device* device, uint32_t unit_bytes, BlockIoStats* stats)
    : device_(device), unit_bytes_(unit_bytes), stats_(stats) {}

Result<io::AlignedBuffer> BlockReader::ReadPhysical(const BlockPointer& bp, io::IoClass cls) {
  if (bp.IsHole()) return Status::InvalidArgument("read of " + bp.ToString() + ": no data");
  const uint64_t len = bp.AllocatedBytes(unit_bytes_);
  io::AlignedBuffer buf(len, std::max<uint32_t>(device_->buffer_alignment(), 64));
  const uint64_t start = DefaultClock()->NowNs();
  Status s = io::ReadSync(*device_, bp.offset_units * unit_bytes_, buf.span(), cls);
  stats_->read_latency_ns->Record(DefaultClock()->NowNs() - start);
  stats_->reads->Add();
  stats_->read_bytes->Add(len);
  if (!s.ok()) return s.WithContext("reading " + bp.ToString());
  return buf;
}

Result<std::vector<uint8_t>> BlockReader::ReadBlock(const BlockPointer& bp) {
  ARC_ASSIGN_OR_RETURN(io::AlignedBuffer buf, ReadPhysical(bp, io::IoClass::kSyncRead));
  Result<std::vector<uint8_t>> r =
      format::ReadBlockPayload(bp, std::span<const uint8_t>(buf.data(), bp.physical_bytes));
  if (!r.ok() && r.status().code() == StatusCode::kCorruption) stats_->checksum_errors->Add();
  return r;
}

Status BlockReader::ReadBlockInto(const BlockPointer& bp, std::span<uint8_t> out) {
  return ReadInto(bp, out, io::IoClass::kSyncRead);
}

Status BlockReader::PrefetchBlockInto(const BlockPointer& bp, std::span<uint8_t> out) {
  return ReadInto(bp, out, io::IoClass::kAsyncRead);
}

Status BlockReader::ReadInto(const BlockPointer& bp, std::span<uint8_t> out, io::IoClass cls) {
  if (out.size() != bp.logical_bytes) {
    return Status::Corruption("block " + bp.ToString() + " holds " +
                              std::to_string(bp.logical_bytes) + " bytes, expected " +
                              std::to_string(out.size()));
  }
  ARC_ASSIGN_OR_RETURN(io::AlignedBuffer buf, ReadPhysical(bp, cls));
  std::span<const uint8_t> physical(buf.data(), bp.physical_bytes);
  Status s = format::VerifyBlock(bp, physical);
  if (!s.ok()) {
    stats_->checksum_errors->Add();
    return s;
  }
  return format::DecompressBlock(bp.compression, physical, out).WithContext("block " +
                                                                            bp.ToString());
}

// A run of physically adjacent blocks, written as one vectored I/O.
struct TxgWriter::Run {
  space::Extent extent;
  // Each buffer holds at least its piece of the extent (a compressed block
  // leaves unused room at its end, which is not written).
  std::vector<std::pair<io::AlignedBuffer, uint64_t>> buffers;
  uint64_t undirty_bytes = 0;
};

TxgWriter::TxgWriter(io::Device* device, space::SpaceAllocator* allocator, uint64_t txg,
                     const TxgWriterOptions& options, BlockIoStats* stats,
                     std::function<void(uint64_t)> on_written)
    : device_(device),
      allocator_(allocator),
      txg_(txg),
      options_(options),
      unit_bytes_(static_cast<uint32_t>(allocator->options().unit_bytes)),
      stats_(stats),
      on_written_(std::move(on_written)) {}

TxgWriter::~TxgWriter() { (void)Finish(); }

Result<BlockPointer> TxgWriter::WriteBlock(const BlockPointer& base,
                                           std::span<const uint8_t> logical) {
  return Write(base, logical, space::AllocClass::kMetadata, 0);
}

Result<BlockPointer> TxgWriter::Write(const BlockPointer& base, std::span<const uint8_t> logical,
                                      space::AllocClass cls, uint64_t undirty_bytes) {
  io::AlignedBuffer buf(RoundUp(logical.size(), unit_bytes_),
                        std::max<uint32_t>(device_->buffer_alignment(), 64));
  ARC_ASSIGN_OR_RETURN(format::Compressed c, format::CompressBlock(base.compression, logical,
                                                                   buf.span()));
  ARC_ASSIGN_OR_RETURN(space::Extent extent, allocator_->Allocate(c.physical_bytes, cls, txg_));
  BlockPointer bp = base;
  bp.compression = c.used;
  bp.birth_txg = txg_;
  bp = format::PointerTo(bp, 0, extent.offset_bytes / unit_bytes_,
                         std::span<const uint8_t>(buf.data(), c.physical_bytes),
                         static_cast<uint32_t>(logical.size()));
  // The padding past the physical bytes is zero (AlignedBuffer is zeroed,
  // and the compressor wrote at most physical_bytes).
  stats_->block_size_bytes->Record(extent.length_bytes);
  stats_->blocks_written->Add();
  Queue(extent, std::move(buf), undirty_bytes);
  return bp;
}

Status TxgWriter::WriteAt(const space::Extent& extent, io::AlignedBuffer physical) {
  if (physical.size() < extent.length_bytes) {
    return Status::Internal("write of " + std::to_string(physical.size()) +
                            " bytes into an extent of " + std::to_string(extent.length_bytes));
  }
  stats_->blocks_written->Add();
  stats_->block_size_bytes->Record(extent.length_bytes);
  Queue(extent, std::move(physical), 0);
  return Status::Ok();
}

space::Extent TxgWriter::ExtentOf(const BlockPointer& bp) const {
  return space::Extent{bp.offset_units * unit_bytes_, bp.AllocatedBytes(unit_bytes_)};
}

Status TxgWriter::FreeBlock(const BlockPointer& bp) {
  if (!bp.OwnsSpace()) return Status::Ok();
  return allocator_->Free(ExtentOf(bp), txg_).WithContext("freeing " + bp.ToString());
}

void TxgWriter::Queue(const space::Extent& extent, io::AlignedBuffer buf, uint64_t undirty_bytes) {
  if (run_ && run_->extent.end_bytes() == extent.offset_bytes &&
      run_->extent.length_bytes + extent.length_bytes <= options_.aggregation_limit_bytes &&
      run_->buffers.size() < io::kMaxIoVecs) {
    run_->extent.length_bytes += extent.length_bytes;
    run_->buffers.emplace_back(std::move(buf), extent.length_bytes);
    run_->undirty_bytes += undirty_bytes;
    return;
  }
  SubmitRun();
  run_ = std::make_unique<Run>();
  run_->extent = extent;
  run_->buffers.emplace_back(std::move(buf), extent.length_bytes);
  run_->undirty_bytes = undirty_bytes;
}

void TxgWriter::SubmitRun() {
  if (!run_) return;
  WaitInflight(options_.max_inflight_ios - 1);
  std::shared_ptr<Run> run(run_.release());
  io::IoRequest req;
  req.op = io::IoOp::kWrite;
  req.io_class = io::IoClass::kAsyncWrite;
  req.offset = run->extent.offset_bytes;
  for (auto& [buf, len] : run->buffers) req.iov.push_back(io::IoVec{buf.data(), len});
  req.parts = static_cast<uint32_t>(run->buffers.size());
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
