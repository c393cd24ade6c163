// FileDevice: a regular file or a block device, with positional vectored
// system calls (preadv/pwritev, fdatasync): the "psync" backend.
//
// Completion: inline. Submit performs the system call on the calling thread
// and calls `done` before returning, so the caller's thread is the I/O
// thread; concurrency comes from concurrent callers (the system calls are
// positional and thread-safe). The pipeline's io_uring backend is a separate
// Device that keeps the same contract with real asynchrony.
//
// Geometry: a block device reports its size (BLKGETSIZE64) and logical
// sector size (BLKSSZGET); a regular file reports its length and
// `file_block_size` (default 4 KiB). With O_DIRECT (DirectIo::kTry uses it
// when the file system accepts it, kRequire fails otherwise) the spans must
// be aligned to buffer_alignment(): use AlignedBuffer.
//
// Discard: BLKDISCARD on block devices; regular files do not support it
// (punching holes would undo "written once at creation", see docs/format.md).
//
// Thread-safety: all methods may be called from any thread. The device owns
// its file descriptor and closes it when destroyed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "io/device.h"

namespace arcstore::io {

enum class DirectIo : uint8_t { kOff, kTry, kRequire };

struct FileDeviceOptions {
  DirectIo direct = DirectIo::kTry;
  bool read_only = false;
  uint32_t file_block_size = 4096;  // regular files: the reported logical block size

  // file_block_size a power of two in [512, 64 KiB].
  Status Validate() const;
};

// The opening half of FileDevice::Open, shared with the io_uring device: the
// file descriptor (owned by the caller) and the geometry.
struct OpenedFile {
  int fd = -1;
  bool direct = false;
  bool is_block_device = false;
  uint32_t block_size = 0;
  uint64_t size_bytes = 0;
};
Result<OpenedFile> OpenBackingFile(const std::string& path, const FileDeviceOptions& options);
// BLKDISCARD on a block device; NotSupported on a regular file.
Status DiscardBackingFile(const Device& device, int fd, bool is_block_device, uint64_t offset,
                          uint64_t length);
// Device::FillHoles for a file: the holes SEEK_HOLE finds in the range
// (none on a block device) written with zeros, a chunk at a time.
Result<uint64_t> FillFileHoles(const Device& device, int fd, bool is_block_device, uint64_t offset,
                               uint64_t length);

// Runs a checked request on `fd` with blocking system calls (preadv/pwritev
// until complete, fdatasync, BLKDISCARD): FileDevice's whole work and
// UringDevice's Execute. `device` names the errors.
Status RunOnFile(const Device& device, int fd, bool is_block_device, const IoRequest& request);

class FileDevice final : public Device {
 public:
  static Result<std::unique_ptr<FileDevice>> Open(const std::string& path,
                                                  const FileDeviceOptions& options);
  ~FileDevice() override;

  const std::string& name() const override { return path_; }
  uint32_t logical_block_size() const override { return block_size_; }
  uint64_t size_bytes() const override { return size_bytes_; }
  uint32_t buffer_alignment() const override { return direct_ ? block_size_ : 1; }
  bool supports_discard() const override { return is_block_device_; }
  void Submit(IoRequest request) override;
  Status Execute(IoRequest request) override;
  Result<uint64_t> FillHoles(uint64_t offset, uint64_t length) override {
    return FillFileHoles(*this, fd_, is_block_device_, offset, length);
  }

  bool direct() const { return direct_; }
  bool is_block_device() const { return is_block_device_; }

 private:
  FileDevice(std::string path, int fd, bool direct, bool is_block_device, uint32_t block_size,
             uint64_t size_bytes);

  const std::string path_;
  const int fd_;
  const bool direct_;
  const bool is_block_device_;
  const uint32_t block_size_;
  const uint64_t size_bytes_;
};

// An advisory lock on a pool file or device for as long as the object lives
// (flock on its own descriptor): exclusive for a writable open, shared for
// a read-only one, so that two processes never write one pool, and a
// reader never reads a pool another process is changing. Move-only.
class FileLock {
 public:
  FileLock() = default;
  // Busy, naming the path, when another open holds a conflicting lock.
  static Result<FileLock> Acquire(const std::string& path, bool exclusive);
  FileLock(FileLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileLock& operator=(FileLock&& o) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  bool held() const { return fd_ >= 0; }

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

struct FileCreateOptions {
  uint64_t size_bytes = 0;
  // false: every byte is written once (zeros) and the file synced, so that
  // later writes never allocate. true: only the length is set.
  bool sparse = false;
  uint64_t chunk_bytes = 1ull << 20;  // write size while filling
  // Called while filling, every progress_every_bytes and at the end.
  std::function<void(uint64_t written_bytes, uint64_t total_bytes)> progress;
  uint64_t progress_every_bytes = 64ull << 20;

  // size > 0 and a multiple of 4 KiB; chunk a power of two in [4 KiB, 64 MiB].
  Status Validate() const;
};

// Creates `path` (which must not exist) as a regular file of options.size_bytes.
Status CreateFileForDevice(const std::string& path, const FileCreateOptions& options);

}  // namespace arcstore::io
