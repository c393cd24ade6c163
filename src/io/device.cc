// The I/O layer's devices. Theory of operation:
//
// Purpose: one interface (device.h) for everything the engine reads and
// writes, so that the pool, the space allocator and the txg sync never know
// whether they talk to a file, a block device, memory, or a wrapper that
// injects faults or records a crash history.
//
//   engine (pool, txg sync, fsck)
//      |  Submit(IoRequest{op, offset, iov, done})      SubmitAndWait / *Sync helpers
//      v
//   [RecordingDevice]   every write/flush with data and sequence numbers
//   [FaultDevice]       rules: EIO, ENOSPC, bit flips, torn and dropped writes
//      v
//   FileDevice (psync: preadv/pwritev/fdatasync, O_DIRECT, inline completion)
//   | UringDevice (io_uring, completion thread) | MemoryDevice (inline)
//
// Wrappers stack in any order; each forwards geometry and wraps completions.
//
// Invariants: every request is checked once by CheckRequest (alignment to
// the logical block size, bounds without overflow, iovec count and size
// limits, buffer alignment for O_DIRECT) before anything is touched; `done`
// runs exactly once; errors name device, operation, offset and length; a
// flush makes durable exactly the writes completed before it was submitted.
// Locking: the helpers here hold only the Waiter's mutex of one synchronous
// call; devices document their own (none is held across a completion).
// Limits: kMaxIoVecs iovecs and kMaxIoBytes per request.
// Tunables: per device (FileDeviceOptions, MemoryDeviceOptions,
// RecordingOptions). Stats: none here; the pipeline's I/O queue counts
// per device and class (ARCHITECTURE.md section 6).
#include "io/device.h"

#include <cstring>
#include <memory>
#include <string>

#include "base/result.h"
#include "base/thread_annotations.h"
#include "base/units.h"

namespace arcstore::io {

std::string_view IoOpName(IoOp op) {
  switch (op) {
    case IoOp::kRead:
      return "read";
    case IoOp::kWrite:
      return "write";
    case IoOp::kFlush:
      return "flush";
    case IoOp::kDiscard:
      return "discard";
  }
  return "unknown-op";
}

std::string_view IoClassName(IoClass cls) {
  switch (cls) {
    case IoClass::kSyncRead:
      return "sync_read";
    case IoClass::kSyncWrite:
      return "sync_write";
    case IoClass::kAsyncRead:
      return "async_read";
    case IoClass::kAsyncWrite:
      return "async_write";
    case IoClass::kLogWrite:
      return "log_write";
    case IoClass::kFromOp:
      return "from_op";
  }
  return "unknown-class";
}

IoClass IoRequest::EffectiveClass() const {
  if (io_class != IoClass::kFromOp) return io_class;
  return op == IoOp::kRead ? IoClass::kSyncRead : IoClass::kSyncWrite;
}

uint64_t IoRequest::length() const {
  if (op == IoOp::kDiscard) return discard_length;
  if (op == IoOp::kFlush) return 0;
  uint64_t total = 0;
  for (const IoVec& v : iov) total += v.size_bytes;
  return total;
}

std::string DescribeIo(const Device& device, IoOp op, uint64_t offset, uint64_t length) {
  std::string s = "device " + device.name() + ": " + std::string(IoOpName(op));
  if (op != IoOp::kFlush) {
    s += " offset " + std::to_string(offset) + " length " + std::to_string(length);
  }
  return s;
}

Status ErrnoStatus(const Device& device, IoOp op, uint64_t offset, uint64_t length, int err) {
  std::string msg = DescribeIo(device, op, offset, length) + ": " + std::strerror(err);
  if (err == ENOSPC) return Status::NoSpace(std::move(msg));
  return Status::IOError(std::move(msg));
}

static Status CheckTransfer(const Device& device, const IoRequest& r) {
  auto where = [&] { return DescribeIo(device, r.op, r.offset, r.length()); };
  if (r.iov.empty() || r.iov.size() > kMaxIoVecs) {
    return Status::InvalidArgument(where() + ": " + std::to_string(r.iov.size()) +
                                   " iovecs (1 to " + std::to_string(kMaxIoVecs) + " allowed)");
  }
  uint64_t total = 0;
  for (const IoVec& v : r.iov) {
    if (v.data == nullptr || v.size_bytes == 0) {
      return Status::InvalidArgument(where() + ": empty or null iovec");
    }
    if (reinterpret_cast<uintptr_t>(v.data) % device.buffer_alignment() != 0 ||
        v.size_bytes % device.buffer_alignment() != 0) {
      return Status::InvalidArgument(where() + ": iovec not aligned to " +
                                     std::to_string(device.buffer_alignment()) + " bytes");
    }
    total += v.size_bytes;
  }
  if (total > kMaxIoBytes) {
    return Status::InvalidArgument(where() + ": more than " + FormatBytes(kMaxIoBytes) +
                                   " in one request");
  }
  return Status::Ok();
}

Status CheckRequest(const Device& device, const IoRequest& r) {
  ARC_CHECK(r.done) << DescribeIo(device, r.op, r.offset, r.length()) << ": no completion";
  if (r.op == IoOp::kFlush) return Status::Ok();
  if (r.op != IoOp::kDiscard) ARC_RETURN_IF_ERROR(CheckTransfer(device, r));
  uint64_t length = r.length();
  uint64_t lbs = device.logical_block_size();
  auto where = [&] { return DescribeIo(device, r.op, r.offset, length); };
  if (length == 0) return Status::InvalidArgument(where() + ": zero length");
  if (r.offset % lbs != 0 || length % lbs != 0) {
    return Status::InvalidArgument(where() + ": not aligned to the logical block size " +
                                   std::to_string(lbs));
  }
  if (r.offset > device.size_bytes() || length > device.size_bytes() - r.offset) {
    return Status::OutOfRange(where() + ": past the end of the device (" +
                              std::to_string(device.size_bytes()) + " bytes)");
  }
  return Status::Ok();
}

namespace {
// The rendezvous of a synchronous call with its completion.
struct Waiter {
  Mutex mu;
  CondVar cv;
  bool done ARC_GUARDED_BY(mu) = false;
  Status status ARC_GUARDED_BY(mu);
};
}  // namespace

Status Device::Execute(IoRequest request) { return SubmitThenWait(*this, std::move(request)); }

Result<uint64_t> Device::FillHoles(uint64_t /*offset*/, uint64_t /*length*/) { return uint64_t{0}; }

Status SubmitAndWait(Device& device, IoRequest request) {
  return device.Execute(std::move(request));
}

Status SubmitThenWait(Device& device, IoRequest request) {
  auto waiter = std::make_shared<Waiter>();
  request.done = [waiter](const Status& s) {
    MutexLock lock(&waiter->mu);
    waiter->status = s;
    waiter->done = true;
    waiter->cv.SignalAll();
  };
  device.Submit(std::move(request));
  MutexLock lock(&waiter->mu);
  while (!waiter->done) waiter->cv.Wait(&waiter->mu);
  return waiter->status;
}

Status ReadSync(Device& device, uint64_t offset, std::span<uint8_t> out, IoClass cls) {
  IoRequest r{.op = IoOp::kRead, .offset = offset, .iov = {{out.data(), out.size()}}};
  r.io_class = cls;
  return SubmitAndWait(device, std::move(r));
}

Status WriteSync(Device& device, uint64_t offset, std::span<const uint8_t> data, IoClass cls) {
  IoRequest r{.op = IoOp::kWrite,
              .offset = offset,
              .iov = {{const_cast<uint8_t*>(data.data()), data.size()}}};
  r.io_class = cls;
  return SubmitAndWait(device, std::move(r));
}

Status FlushSync(Device& device) { return SubmitAndWait(device, IoRequest{.op = IoOp::kFlush}); }

Status DiscardSync(Device& device, uint64_t offset, uint64_t length) {
  return SubmitAndWait(device,
                       IoRequest{.op = IoOp::kDiscard, .offset = offset, .discard_length = length});
}

template <typename Fn>
static void WalkIov(const std::vector<IoVec>& iov, uint64_t from, uint64_t length, Fn fn) {
  uint64_t pos = 0;
  for (const IoVec& v : iov) {
    if (length == 0) break;
    if (from < pos + v.size_bytes) {
      uint64_t skip = from > pos ? from - pos : 0;
      uint64_t n = std::min<uint64_t>(v.size_bytes - skip, length);
      fn(v.data + skip, n);
      from += n;
      length -= n;
    }
    pos += v.size_bytes;
  }
}

void GatherIov(const std::vector<IoVec>& iov, uint64_t from, uint64_t length, uint8_t* out) {
  WalkIov(iov, from, length, [&](uint8_t* p, uint64_t n) {
    std::memcpy(out, p, n);
    out += n;
  });
}

void ScatterIov(const std::vector<IoVec>& iov, uint64_t from, uint64_t length, const uint8_t* in) {
  WalkIov(iov, from, length, [&](uint8_t* p, uint64_t n) {
    std::memcpy(p, in, n);
    in += n;
  });
}

std::vector<IoVec> SliceIov(const std::vector<IoVec>& iov, uint64_t from, uint64_t length) {
  std::vector<IoVec> out;
  WalkIov(iov, from, length, [&](uint8_t* p, uint64_t n) { out.push_back({p, n}); });
  return out;
}

}  // namespace arcstore::io
