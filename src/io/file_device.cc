// The psync file device. Theory of operation:
//
//   Submit(req) --CheckRequest--> preadv/pwritev loop | fdatasync | BLKDISCARD
//                                 (pwritev2 with RWF_DSYNC for a FUA write)
//        |                                                   |
//        +------------------- done(status) <-----------------+  (same thread)
//
// Invariants: a short transfer is continued until the request is complete or
// the kernel reports an error; a read that meets end-of-file is an IOError
// (the device never returns made-up bytes). EINTR is retried. Every error
// names the path, the operation, the offset and the length.
// Locking: none; the file descriptor is shared and the calls are positional.
// Limits: those of CheckRequest (kMaxIoVecs, kMaxIoBytes).
#include "io/file_device.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/units.h"
#include "io/aligned_buffer.h"

namespace arcstore::io {

Status FileDeviceOptions::Validate() const {
  if (!IsPowerOfTwo(file_block_size) || file_block_size < 512 || file_block_size > 64 * kKiB) {
    return Status::InvalidArgument("file_block_size " + std::to_string(file_block_size) +
                                   ": must be a power of two from 512 to 64 KiB");
  }
  return Status::Ok();
}

static Status OpenError(const std::string& path, const char* what, int err) {
  return Status::IOError("device " + path + ": " + what + ": " + std::strerror(err));
}

// Opens with O_DIRECT when asked and accepted; returns the fd and whether
// O_DIRECT is on.
static Result<std::pair<int, bool>> OpenFd(const std::string& path, const FileDeviceOptions& o) {
  int flags = (o.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;
  if (o.direct != DirectIo::kOff) {
    int fd = ::open(path.c_str(), flags | O_DIRECT);
    if (fd >= 0) return std::make_pair(fd, true);
    if (o.direct == DirectIo::kRequire || errno != EINVAL) {
      return OpenError(path, "open with O_DIRECT", errno);
    }
  }
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) return OpenError(path, "open", errno);
  return std::make_pair(fd, false);
}

Result<OpenedFile> OpenBackingFile(const std::string& path, const FileDeviceOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  ARC_ASSIGN_OR_RETURN(auto opened, OpenFd(path, options));
  OpenedFile f{.fd = opened.first, .direct = opened.second, .block_size = options.file_block_size};
  struct stat st;
  if (::fstat(f.fd, &st) != 0) {
    int err = errno;
    ::close(f.fd);
    return OpenError(path, "fstat", err);
  }
  f.is_block_device = S_ISBLK(st.st_mode);
  if (f.is_block_device) {
    int sector = 0;
    if (::ioctl(f.fd, BLKGETSIZE64, &f.size_bytes) != 0 || ::ioctl(f.fd, BLKSSZGET, &sector) != 0) {
      int err = errno;
      ::close(f.fd);
      return OpenError(path, "BLKGETSIZE64/BLKSSZGET", err);
    }
    f.block_size = static_cast<uint32_t>(sector);
  } else if (S_ISREG(st.st_mode)) {
    f.size_bytes = static_cast<uint64_t>(st.st_size) / f.block_size * f.block_size;
  } else {
    ::close(f.fd);
    return Status::InvalidArgument("device " + path +
                                   ": neither a regular file nor a block device");
  }
  if (f.size_bytes == 0) {
    ::close(f.fd);
    return Status::InvalidArgument("device " + path + ": empty (less than one " +
                                   std::to_string(f.block_size) + "-byte block)");
  }
  return f;
}

Result<std::unique_ptr<FileDevice>> FileDevice::Open(const std::string& path,
                                                     const FileDeviceOptions& options) {
  ARC_ASSIGN_OR_RETURN(OpenedFile f, OpenBackingFile(path, options));
  return std::unique_ptr<FileDevice>(
      new FileDevice(path, f.fd, f.direct, f.is_block_device, f.block_size, f.size_bytes));
}

FileDevice::FileDevice(std::string path, int fd, bool direct, bool is_block_device,
                       uint32_t block_size, uint64_t size_bytes)
    : path_(std::move(path)),
      fd_(fd),
      direct_(direct),
      is_block_device_(is_block_device),
      block_size_(block_size),
      size_bytes_(size_bytes) {}

FileDevice::~FileDevice() { ::close(fd_); }

void FileDevice::Submit(IoRequest request) {
  Status s = CheckRequest(*this, request);
  if (s.ok()) s = RunOnFile(*this, fd_, is_block_device_, request);
  request.done(s);
}

Status FileDevice::Execute(IoRequest request) {
  if (!request.done) request.done = [](const Status&) {};
  ARC_RETURN_IF_ERROR(CheckRequest(*this, request));
  return RunOnFile(*this, fd_, is_block_device_, request);
}

static Status Transfer(const Device& device, int fd, const IoRequest& r) {
  std::vector<iovec> vecs;
  vecs.reserve(r.iov.size());
  for (const IoVec& v : r.iov) vecs.push_back({v.data, v.size_bytes});
  const uint64_t total = r.length();
  uint64_t done = 0;
  size_t first = 0;
  while (done < total) {
    off_t at = static_cast<off_t>(r.offset + done);
    int n = static_cast<int>(vecs.size() - first);
    ssize_t got = r.op == IoOp::kRead ? ::preadv(fd, &vecs[first], n, at)
                  : r.fua             ? ::pwritev2(fd, &vecs[first], n, at, RWF_DSYNC)
                                      : ::pwritev(fd, &vecs[first], n, at);
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(device, r.op, r.offset, total, errno);
    }
    if (got == 0) {
      return Status::IOError(DescribeIo(device, r.op, r.offset, total) + ": end of file after " +
                             std::to_string(done) + " bytes");
    }
    done += static_cast<uint64_t>(got);
    // Drop the iovecs that are complete and trim the partial one.
    size_t left = static_cast<size_t>(got);
    while (first < vecs.size() && left >= vecs[first].iov_len) left -= vecs[first++].iov_len;
    if (left > 0) {
      vecs[first].iov_base = static_cast<uint8_t*>(vecs[first].iov_base) + left;
      vecs[first].iov_len -= left;
    }
  }
  return Status::Ok();
}

Status RunOnFile(const Device& device, int fd, bool is_block_device, const IoRequest& r) {
  switch (r.op) {
    case IoOp::kRead:
    case IoOp::kWrite:
      return Transfer(device, fd, r);
    case IoOp::kFlush:
      while (::fdatasync(fd) != 0) {
        if (errno != EINTR) return ErrnoStatus(device, r.op, 0, 0, errno);
      }
      return Status::Ok();
    case IoOp::kDiscard:
      return DiscardBackingFile(device, fd, is_block_device, r.offset, r.discard_length);
  }
  return Status::Internal("unknown op");
}

Status DiscardBackingFile(const Device& device, int fd, bool is_block_device, uint64_t offset,
                          uint64_t length) {
  if (!is_block_device) {
    return Status::NotSupported(DescribeIo(device, IoOp::kDiscard, offset, length) +
                                ": discard needs a block device");
  }
  uint64_t range[2] = {offset, length};
  if (::ioctl(fd, BLKDISCARD, &range) != 0) {
    return ErrnoStatus(device, IoOp::kDiscard, offset, length, errno);
  }
  return Status::Ok();
}

// Writes zeros from *at up to `to`, zeros.size() bytes at a time, calling
// `written` after each write. Returns 0, or the errno of the write that
// failed at *at.
static int WriteZeros(int fd, const AlignedBuffer& zeros, uint64_t* at, uint64_t to,
                      const std::function<void(uint64_t before)>& written) {
  while (*at < to) {
    const ssize_t n = ::pwrite(fd, zeros.data(), std::min<uint64_t>(zeros.size(), to - *at),
                               static_cast<off_t>(*at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    const uint64_t before = *at;
    *at += static_cast<uint64_t>(n);
    if (written) written(before);
  }
  return 0;
}

Result<uint64_t> FillFileHoles(const Device& device, int fd, bool is_block_device, uint64_t offset,
                               uint64_t length) {
  if (is_block_device || length == 0) return uint64_t{0};
  const uint64_t end = offset + length;
  const auto fail = [&](const char* what, uint64_t at, int err) {
    return Status::IOError(DescribeIo(device, IoOp::kWrite, offset, length) + ": filling holes: " +
                           what + " at " + std::to_string(at) + ": " + std::strerror(err));
  };
  constexpr uint64_t kChunkBytes = 1ull << 20;
  AlignedBuffer zeros;  // made at the first hole
  uint64_t filled = 0;
  for (uint64_t at = offset; at < end;) {
    const off_t hole = ::lseek(fd, static_cast<off_t>(at), SEEK_HOLE);
    if (hole < 0) {
      if (errno == ENXIO) break;  // at or past the end of the file
      return fail("SEEK_HOLE", at, errno);
    }
    if (static_cast<uint64_t>(hole) >= end) break;
    const off_t data = ::lseek(fd, hole, SEEK_DATA);
    if (data < 0 && errno != ENXIO) return fail("SEEK_DATA", static_cast<uint64_t>(hole), errno);
    // Hole boundaries are file system blocks, a multiple of the device's.
    const uint64_t from = std::max<uint64_t>(static_cast<uint64_t>(hole), at);
    const uint64_t to = data < 0 ? end : std::min<uint64_t>(static_cast<uint64_t>(data), end);
    if (zeros.size() == 0) {
      zeros = AlignedBuffer(kChunkBytes, std::max<size_t>(4096, device.buffer_alignment()));
    }
    uint64_t w = from;
    if (const int err = WriteZeros(fd, zeros, &w, to, nullptr); err != 0) {
      return fail("write", w, err);
    }
    filled += to - from;
    at = to;
  }
  return filled;
}

Result<FileLock> FileLock::Acquire(const std::string& path, bool exclusive) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OpenError(path, "open to lock", errno);
  while (::flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::Busy("device " + path + ": in use by another open (" +
                          (exclusive ? "a writable open needs it alone"
                                     : "another process has it open for writing") +
                          "); close that first, or read a running server's stats through its "
                          "control socket");
    }
    return OpenError(path, "flock", err);
  }
  return FileLock(fd);
}

FileLock& FileLock::operator=(FileLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

Status FileCreateOptions::Validate() const {
  if (size_bytes == 0 || size_bytes % (4 * kKiB) != 0) {
    return Status::InvalidArgument("size_bytes " + std::to_string(size_bytes) +
                                   ": must be a positive multiple of 4 KiB");
  }
  if (!IsPowerOfTwo(chunk_bytes) || chunk_bytes < 4 * kKiB || chunk_bytes > 64 * kMiB) {
    return Status::InvalidArgument("chunk_bytes " + std::to_string(chunk_bytes) +
                                   ": must be a power of two from 4 KiB to 64 MiB");
  }
  if (progress_every_bytes == 0) return Status::InvalidArgument("progress_every_bytes is 0");
  return Status::Ok();
}

static Status FillFile(int fd, const std::string& path, const FileCreateOptions& o) {
  AlignedBuffer zeros(o.chunk_bytes, 4096);
  uint64_t at = 0;
  const int err = WriteZeros(fd, zeros, &at, o.size_bytes, [&](uint64_t before) {
    if (o.progress && (at == o.size_bytes ||
                       at / o.progress_every_bytes != before / o.progress_every_bytes)) {
      o.progress(at, o.size_bytes);
    }
  });
  if (err != 0) return OpenError(path, ("fill at offset " + std::to_string(at)).c_str(), err);
  if (::fsync(fd) != 0) return OpenError(path, "fsync", errno);
  return Status::Ok();
}

Status CreateFileForDevice(const std::string& path, const FileCreateOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return OpenError(path, "create", errno);
  Status s;
  if (::ftruncate(fd, static_cast<off_t>(options.size_bytes)) != 0) {
    s = errno == EFBIG ? Status::InvalidArgument(
                             "device " + path + ": the filesystem that holds it cannot hold a "
                             "file of " + std::to_string(options.size_bytes) +
                             " bytes (EFBIG): choose a smaller size or another filesystem")
                       : OpenError(path, "ftruncate", errno);
  } else if (!options.sparse) {
    s = FillFile(fd, path, options);
  }
  ::close(fd);
  if (!s.ok()) ::unlink(path.c_str());
  return s;
}

}  // namespace arcstore::io
