// Device: a block device as the engine sees it (a file, a block device, memory,
// or a wrapper that injects faults or records what is written).
//
// A device is `size_bytes()` long and transfers whole logical blocks:
// every read, write and discard starts at a multiple of
// logical_block_size() and covers a whole number of them (checked by
// CheckRequest(); a request that breaks the rule completes with
// InvalidArgument or OutOfRange and touches nothing). Reads and writes are
// vectored and positional: one request moves the bytes of its spans, in
// order, to or from [offset, offset + total length).
//
// Submission model: Submit() starts a request and returns; `done` is called
// exactly once with the outcome, either inline (before Submit returns) or
// later on a device thread, as each implementation states. Until `done`
// runs, the spans must stay valid and (for writes) unchanged. Completions of
// different requests may arrive in any order; there is no ordering between
// concurrent requests. Flush is a durability barrier: when it completes OK,
// every write that COMPLETED before the flush was SUBMITTED is durable. A
// write with `fua` set is durable when it completes OK (its own data only:
// forced unit access, RWF_DSYNC on a file). The synchronous helpers below
// call Execute: submit and wait, or the request done on the caller's thread
// by a device that can.
//
// Errors name the device, the operation, the offset and the length:
//   "device /dev/sdb: write offset 8192 length 4096: Input/output error".
//
// Thread-safety: Submit may be called concurrently from any thread; the
// accessors are immutable after construction. `done` must not block for
// long (it may run on a device thread) and may submit new requests.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "arcstore/result.h"
#include "arcstore/status.h"

namespace arcstore::io {

enum class IoOp : uint8_t { kRead, kWrite, kFlush, kDiscard };
std::string_view IoOpName(IoOp op);

// The scheduling class of a request (io_queue.h): what waits for it.
//   kSyncRead    a reader waits (demand reads, open, fsck)
//   kSyncWrite   a caller waits (labels, uberblocks, flushes)
//   kAsyncRead   nobody waits yet (prefetch)
//   kAsyncWrite  the txg sync's writes
//   kLogWrite    the intent log's writes (a flush waits)
// kFromOp: kSyncRead for reads, kSyncWrite for everything else.
enum class IoClass : uint8_t { kSyncRead, kSyncWrite, kAsyncRead, kAsyncWrite, kLogWrite, kFromOp };
inline constexpr int kNumIoClasses = 5;
// "sync_read", "sync_write", "async_read", "async_write", "log_write".
std::string_view IoClassName(IoClass cls);

// One piece of a vectored transfer (like struct iovec). For writes the
// device only reads the bytes.
struct IoVec {
  uint8_t* data = nullptr;
  size_t size_bytes = 0;
};

using IoCallback = std::function<void(const Status&)>;

struct IoRequest {
  IoOp op = IoOp::kRead;
  uint64_t offset = 0;
  std::vector<IoVec> iov;       // kRead, kWrite
  uint64_t discard_length = 0;  // kDiscard only
  IoCallback done;
  IoClass io_class = IoClass::kFromOp;
  // Individual requests merged into this one by its submitter (the txg
  // sync's aggregation); when > 1, each iovec is one of them.
  uint32_t parts = 1;
  // kWrite only: durable when it completes (device.h's contract above).
  bool fua = false;

  // io_class, with kFromOp resolved from the op.
  IoClass EffectiveClass() const;

  // Bytes transferred (sum of iov) for reads and writes; discard_length for
  // discards; 0 for flushes.
  uint64_t length() const;
};

// Limits every device enforces (CheckRequest).
inline constexpr size_t kMaxIoVecs = 1024;                    // IOV_MAX on Linux
inline constexpr uint64_t kMaxIoBytes = 64ull * 1024 * 1024;  // per read or write

class Device {
 public:
  virtual ~Device() = default;

  // A short human name for messages: a path, or "mem0".
  virtual const std::string& name() const = 0;
  // The unit of transfer, a power of two >= 512.
  virtual uint32_t logical_block_size() const = 0;
  virtual uint64_t size_bytes() const = 0;
  // Alignment the spans' addresses need (O_DIRECT); 1 when any will do.
  virtual uint32_t buffer_alignment() const { return 1; }
  // Whether kDiscard does anything; when false it completes NotSupported.
  virtual bool supports_discard() const = 0;

  virtual void Submit(IoRequest request) = 0;

  // Runs `request` to completion and returns its outcome (`done`, if set,
  // is not called). Devices that can transfer with a blocking system call
  // on the calling thread override this: no completion thread and no
  // wake-up between the caller and the kernel, the latency that matters to
  // an intent-log commit or a demand read at queue depth 1. The default
  // submits and waits. Wrappers that see requests through Submit (fault
  // injection, recording) keep the default, so they still see them all.
  virtual Status Execute(IoRequest request);

  // Makes [offset, offset + length) hold storage, so that later writes
  // there allocate nothing in a file system below: the holes a sparse
  // file has in the range are written with zeros. Returns the bytes
  // written: 0 where there is nothing to do (a block device, memory, a
  // file without holes there, a file system that cannot tell). Not
  // ordered with requests: call it only on space nothing else writes yet.
  // The zeros are not flushed.
  virtual Result<uint64_t> FillHoles(uint64_t offset, uint64_t length);
};

// The shared argument check: alignment, bounds, iov count and size limits,
// buffer alignment. OK or InvalidArgument/OutOfRange naming the request.
Status CheckRequest(const Device& device, const IoRequest& request);

// "device mem0: write offset 4096 length 8192".
std::string DescribeIo(const Device& device, IoOp op, uint64_t offset, uint64_t length);

// An error Status (kind chosen from errno: ENOSPC -> NoSpace, else IOError)
// whose message names the request and the errno text.
Status ErrnoStatus(const Device& device, IoOp op, uint64_t offset, uint64_t length, int err);

// The alignment of the buffers the engine makes for `device`'s I/O: what
// the device needs, and at least a cache line (64).
inline size_t BufferAlignmentFor(const Device& device) {
  return std::max<size_t>(device.buffer_alignment(), 64);
}

// Synchronous helpers: device.Execute (submit and wait for the completion,
// unless the device runs the request on the calling thread).
Status SubmitAndWait(Device& device, IoRequest request);
// Device::Execute's default: Submit, then wait for `done`.
Status SubmitThenWait(Device& device, IoRequest request);
Status ReadSync(Device& device, uint64_t offset, std::span<uint8_t> out,
                IoClass cls = IoClass::kFromOp);
Status WriteSync(Device& device, uint64_t offset, std::span<const uint8_t> data,
                 IoClass cls = IoClass::kFromOp);
Status FlushSync(Device& device);
Status DiscardSync(Device& device, uint64_t offset, uint64_t length);

// Copies `length` bytes of a vectored buffer starting at byte `from` into
// (or out of) a flat buffer. Ranges are checked by the caller.
void GatherIov(const std::vector<IoVec>& iov, uint64_t from, uint64_t length, uint8_t* out);
void ScatterIov(const std::vector<IoVec>& iov, uint64_t from, uint64_t length, const uint8_t* in);
// The sub-vector covering bytes [from, from + length) of `iov`.
std::vector<IoVec> SliceIov(const std::vector<IoVec>& iov, uint64_t from, uint64_t length);

}  // namespace arcstore::io
