// Volume: a block device's worth of bytes, the unit arcstore serves.
//
// A volume is `size_bytes` long and cut into records of `record_size_bytes`
// (a power of two, 4 KiB to 1 MiB). Any byte range inside it can be read,
// written, trimmed or zeroed; the engine does the read-modify-write of
// partial records. Unwritten and trimmed records read as zeros.
//
// The interface is asynchronous: each Submit* call starts an operation and
// returns at once; `done` is called exactly once with the outcome, either
// inline (before Submit* returns) or later on an engine thread. Buffers
// passed in must stay valid and untouched until `done` runs. The synchronous
// calls at the bottom wrap the asynchronous ones.
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

// The operations MayWait() is asked about.
enum class VolumeOp : uint8_t { kRead, kWrite, kTrim, kWriteZeroes };

using Completion = std::function<void(Status)>;
using ExtentsCompletion = std::function<void(Status, std::vector<Extent>)>;

class Volume {
 public:
  virtual ~Volume() = default;

  virtual VolumeInfo info() const = 0;

  virtual void SubmitRead(uint64_t offset, std::span<uint8_t> out, Completion done) = 0;
  virtual void SubmitWrite(uint64_t offset, std::span<const uint8_t> data, uint32_t write_flags,
                           Completion done) = 0;
  // Every write completed before this call is durable when `done` gets OK.
  virtual void SubmitFlush(Completion done) = 0;

  // Zero-copy writes (see PreparedWrite). PrepareWrite never fails: a bad
  // range is reported by the write. The default lends one plain buffer and
  // writes it through SubmitWrite.
  virtual std::unique_ptr<PreparedWrite> PrepareWrite(uint64_t offset, uint64_t length);
  // Writes `prepared` (from this volume's PrepareWrite, filled); the
  // volume keeps it until `done` has run.
  virtual void SubmitPrepared(std::unique_ptr<PreparedWrite> prepared, uint32_t write_flags,
                              Completion done);
  // Deallocates whole records inside the range; partial records are zeroed.
  virtual void SubmitTrim(uint64_t offset, uint64_t length, Completion done) = 0;
  virtual void SubmitWriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags,
                                 Completion done) = 0;
  // Prefetches the range into the cache (NBD_CMD_CACHE); no data returned.
  virtual void SubmitCache(uint64_t offset, uint64_t length, Completion done) = 0;
  // Describes [offset, offset + length) as extents in order, covering at
  // least the first byte; they may stop short of the end of the range.
  virtual void SubmitBlockStatus(uint64_t offset, uint64_t length, ExtentsCompletion done) = 0;

  // Synchronous calls: block the caller until the operation completes. By
  // default they wrap Submit*; an implementation may run them directly on
  // the caller's thread.
  virtual Status Read(uint64_t offset, std::span<uint8_t> out);
  virtual Status Write(uint64_t offset, std::span<const uint8_t> data,
                       uint32_t write_flags = kWriteNone);
  virtual Status WritePrepared(std::unique_ptr<PreparedWrite> prepared,
                               uint32_t write_flags = kWriteNone);
  virtual Status Flush();
  virtual Status Trim(uint64_t offset, uint64_t length);
  virtual Status WriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags = kZeroNone);
  virtual Status Cache(uint64_t offset, uint64_t length);
  virtual Status BlockStatus(uint64_t offset, uint64_t length, std::vector<Extent>* extents);

  // A hint, not a promise: whether `op` on [offset, offset + length) (no
  // FUA), started now through its synchronous call, might wait for
  // something (a disk read, the write throttle, memory, a txg sync) rather
  // than finish in memory on the caller's thread. A caller that runs
  // operations on a thread of its own (the NBD server's connection thread)
  // asks it to decide whether to run one there or submit it. Cheap, never
  // blocks, and may be wrong either way: a wrong answer costs time, never
  // correctness, since the operation itself decides what it waits for. The
  // default: it may wait.
  virtual bool MayWait(VolumeOp /*op*/, uint64_t /*offset*/, uint64_t /*length*/) {
    return true;
  }
};

// Checks that [offset, offset + length) lies inside a volume of `size_bytes`
// without overflow; the error names the operation, range and size.
Status CheckRange(const char* op, uint64_t offset, uint64_t length, uint64_t size_bytes);

}  // namespace arcstore
