// Volume: a block device's worth of bytes, the unit arcstore serves.
//
// A volume is `size_bytes` long and cut into records of `record_size_bytes`
// (a power of two, 4 KiB to 1 MiB). Any byte range inside it can be read,
// written, trimmed or zeroed; the engine does the read-modify-write of
// partial records. Unwritten and trimmed records read as zeros.
//
// The interface is asynchronous: Submit starts one operation (a
// VolumeRequest) and returns at once; `done` is called exactly once with the
// outcome, either inline (before Submit returns) or later on an engine
// thread. Buffers passed in must stay valid and untouched until `done` runs.
// The named Submit* and synchronous calls are plain functions over Submit.
//
// Durability: a write is durable once a Flush submitted after its completion
// has completed OK, or immediately when written with WriteFlags::kFua. After
// a power cut every durable write is present and the rest of the pool is the
// state of one transaction group (docs/format.md).
//
// Thread-safety: all methods may be called concurrently from any thread.
// Overlapping concurrent writes land in some order, each one whole per record.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "arcstore/status.h"

namespace arcstore {

struct VolumeInfo {
  std::string name;
  uint64_t guid = 0;
  uint64_t size_bytes = 0;
  uint32_t record_size_bytes = 128 * 1024;
  std::string compression = "lz4";  // off, lz4, zstd
};

enum WriteFlags : uint32_t {
  kWriteNone = 0,
  kFua = 1u << 0,  // durable before completion
};

enum ZeroFlags : uint32_t {
  kZeroNone = 0,
  kZeroNoHole = 1u << 0,    // keep the space allocated (write real zeros)
  kZeroFastOnly = 1u << 1,  // fail with NotSupported unless zeroing is cheap
};

// One run of block status: [offset, offset + length) is all of one kind.
struct Extent {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool hole = false;  // not allocated (reads as zeros)
  bool zero = false;  // reads as zeros (true for every hole)
};

// Memory for one write of [offset, offset + length), lent by the volume
// that will take it (Volume::PrepareWrite): the caller fills pieces(), in
// order (together exactly length() bytes), then hands the whole object back
// to SubmitPrepared or WritePrepared of the same volume. The engine lends
// its own record buffers for the whole records of the range, so writing
// them copies nothing (the NBD server receives a WRITE's payload straight
// into them); other volumes lend one plain buffer.
class PreparedWrite {
 public:
  PreparedWrite(uint64_t offset, uint64_t length) : offset_(offset), length_(length) {}
  virtual ~PreparedWrite() = default;
  PreparedWrite(const PreparedWrite&) = delete;
  PreparedWrite& operator=(const PreparedWrite&) = delete;

  uint64_t offset() const { return offset_; }
  uint64_t length() const { return length_; }
  const std::vector<std::span<uint8_t>>& pieces() const { return pieces_; }

 protected:
  std::vector<std::span<uint8_t>> pieces_;  // set by the lending volume

 private:
  const uint64_t offset_;
  const uint64_t length_;
};

// The operations a volume runs (VolumeRequest::op).
enum class VolumeOp : uint8_t {
  kRead,
  kWrite,
  kTrim,
  kWriteZeroes,
  kFlush,
  kCache,        // prefetch into the cache (NBD_CMD_CACHE); no data returned
  kBlockStatus,  // describe the range as extents
};

// "read", "write", "trim", "write zeroes", "flush", "cache", "block status".
const char* VolumeOpName(VolumeOp op);

// One operation on a volume, as Volume::Submit takes it. Build it with the
// named constructors; the fields an op does not use stay empty.
struct VolumeRequest {
  VolumeOp op = VolumeOp::kFlush;
  // The byte range [offset, offset + length), for every op but kFlush
  // (kRead and kWrite: the size of `out`, `data` or `prepared`).
  uint64_t offset = 0;
  uint64_t length = 0;
  std::span<uint8_t> out;          // kRead: where the bytes go
  std::span<const uint8_t> data;   // kWrite: the bytes, unless `prepared`
  // kWrite: a filled PreparedWrite from this volume's PrepareWrite instead
  // of `data`; the volume keeps it until `done` has run.
  std::shared_ptr<PreparedWrite> prepared;
  uint32_t flags = 0;  // kWrite: WriteFlags; kWriteZeroes: ZeroFlags
  // kBlockStatus: cleared, then filled before `done` runs: extents in
  // order, covering at least the first byte of the range, maybe not all.
  std::vector<Extent>* extents = nullptr;
  // The caller blocks until `done` has run (Volume::SubmitAndWait): a
  // volume that can run the operation on the caller's thread should, rather
  // than hand it to one of its own and back. A hint, never required.
  bool caller_waits = false;

  static VolumeRequest Read(uint64_t offset, std::span<uint8_t> out);
  static VolumeRequest Write(uint64_t offset, std::span<const uint8_t> data,
                             uint32_t write_flags = kWriteNone);
  static VolumeRequest Prepared(std::unique_ptr<PreparedWrite> prepared,
                                uint32_t write_flags = kWriteNone);
  static VolumeRequest Flush();
  static VolumeRequest Trim(uint64_t offset, uint64_t length);
  static VolumeRequest WriteZeroes(uint64_t offset, uint64_t length,
                                   uint32_t zero_flags = kZeroNone);
  static VolumeRequest Cache(uint64_t offset, uint64_t length);
  static VolumeRequest BlockStatus(uint64_t offset, uint64_t length, std::vector<Extent>* extents);

  // kWrite: the bytes to write in one span: `data`, or the only piece of a
  // PreparedWrite from the default PrepareWrite. Empty with a `prepared`
  // of more pieces (one a volume lent itself, which that volume unpacks).
  std::span<const uint8_t> bytes() const;
};

using Completion = std::function<void(Status)>;
using ExtentsCompletion = std::function<void(Status, std::vector<Extent>)>;

// A volume implements four calls: info(), the asynchronous core Submit(),
// and two capabilities with defaults, PrepareWrite (lending its own
// buffers) and MayWait (the hint). Everything else is a plain function
// over Submit (src/api/volume_calls.cc).
class Volume {
 public:
  virtual ~Volume() = default;

  virtual VolumeInfo info() const = 0;

  // Starts `req`; `done` runs exactly once with its outcome, inline (before
  // Submit returns) or later on another thread. A bad range, a read-only
  // volume or an op the volume does not support is reported through
  // `done`. Flush: every write completed before the Submit is durable when
  // `done` gets OK.
  virtual void Submit(VolumeRequest req, Completion done) = 0;

  // Zero-copy writes (see PreparedWrite). PrepareWrite never fails: a bad
  // range is reported by the write. The default lends one plain buffer.
  virtual std::unique_ptr<PreparedWrite> PrepareWrite(uint64_t offset, uint64_t length);

  // A hint, not a promise: whether `op` on [offset, offset + length) (no
  // FUA), started now through SubmitAndWait, might wait for something (a
  // disk read, the write throttle, memory, a txg sync) rather than finish
  // in memory on the caller's thread. A caller that runs operations on a
  // thread of its own (the NBD server's connection thread) asks it to
  // decide whether to run one there or submit it. Cheap, never blocks, and
  // may be wrong either way: a wrong answer costs time, never correctness,
  // since the operation itself decides what it waits for. For kFlush
  // (offset and length ignored) the question is whether the flush may wait
  // for a txg sync rather than only a log write. The default: it may wait.
  virtual bool MayWait(VolumeOp /*op*/, uint64_t /*offset*/, uint64_t /*length*/) {
    return true;
  }

  // For a caller that runs operations on a thread of its own and waits for
  // its client between them (the NBD server's connection thread): between
  // SetCallerThread(true) and SetCallerThread(false), both called on that
  // thread, work that an operation of the thread makes due for a
  // background thread to start at once (an early intent log write) is left
  // to the thread instead, which does it in BeforeCallerWaits: it calls
  // that whenever it is about to wait for its client. Saves a background
  // thread's wake-up per operation; work left is never lost, only started
  // later (a flush still makes everything durable). The defaults do
  // nothing.
  virtual void SetCallerThread(bool /*on*/) {}
  virtual void BeforeCallerWaits() {}

  // ---- Calls over Submit (not virtual) -----------------------------------
  // Submits `req` with caller_waits set and blocks until it completes.
  Status SubmitAndWait(VolumeRequest req);

  void SubmitRead(uint64_t offset, std::span<uint8_t> out, Completion done);
  void SubmitWrite(uint64_t offset, std::span<const uint8_t> data, uint32_t write_flags,
                   Completion done);
  // Writes `prepared` (from this volume's PrepareWrite, filled).
  void SubmitPrepared(std::unique_ptr<PreparedWrite> prepared, uint32_t write_flags,
                      Completion done);
  void SubmitFlush(Completion done);
  // Deallocates whole records inside the range; partial records are zeroed.
  void SubmitTrim(uint64_t offset, uint64_t length, Completion done);
  void SubmitWriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags, Completion done);
  void SubmitCache(uint64_t offset, uint64_t length, Completion done);
  void SubmitBlockStatus(uint64_t offset, uint64_t length, ExtentsCompletion done);

  // Synchronous: block the caller until the operation completes.
  Status Read(uint64_t offset, std::span<uint8_t> out);
  Status Write(uint64_t offset, std::span<const uint8_t> data, uint32_t write_flags = kWriteNone);
  Status WritePrepared(std::unique_ptr<PreparedWrite> prepared, uint32_t write_flags = kWriteNone);
  Status Flush();
  Status Trim(uint64_t offset, uint64_t length);
  Status WriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags = kZeroNone);
  Status Cache(uint64_t offset, uint64_t length);
  Status BlockStatus(uint64_t offset, uint64_t length, std::vector<Extent>* extents);
};

// Checks that [offset, offset + length) lies inside a volume of `size_bytes`
// without overflow; the error names the operation, range and size.
Status CheckRange(const char* op, uint64_t offset, uint64_t length, uint64_t size_bytes);

}  // namespace arcstore
