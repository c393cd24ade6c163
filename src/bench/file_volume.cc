#include "bench/file_volume.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "format/signature.h"

namespace arcstore::bench {
namespace {

constexpr size_t kFillChunkBytes = 1 << 20;

Result<uint64_t> FdSize(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return Status::IOError(std::string("fstat: ") + std::strerror(errno));
  if (S_ISBLK(st.st_mode)) {
    uint64_t bytes = 0;
    if (ioctl(fd, BLKGETSIZE64, &bytes) != 0) {
      return Status::IOError(std::string("BLKGETSIZE64: ") + std::strerror(errno));
    }
    return bytes;
  }
  return static_cast<uint64_t>(st.st_size);
}

Status FillFile(int fd, uint64_t size_bytes, const std::string& path) {
  void* mem = nullptr;
  if (posix_memalign(&mem, 4096, kFillChunkBytes) != 0) return Status::ResourceExhausted("fill buffer");
  std::unique_ptr<void, decltype(&std::free)> buf(mem, &std::free);
  std::memset(mem, 0, kFillChunkBytes);
  for (uint64_t at = 0; at < size_bytes;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kFillChunkBytes, size_bytes - at));
    ssize_t w = pwrite(fd, mem, n, static_cast<off_t>(at));
    if (w <= 0) return Status::IOError(path + ": laying out: " + std::strerror(errno));
    at += static_cast<uint64_t>(w);
  }
  if (fdatasync(fd) != 0) return Status::IOError(path + ": fdatasync: " + std::strerror(errno));
  return Status::Ok();
}

// An existing baseline file (or block device) is written only when no pool
// or other program holds it locked and it carries no signature (a pool's
// label, a filesystem, a partition table): the output-file rule
// (format/output_file.h). The lock is kept while the file is open.
Status CheckOursToWrite(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::IOError(path + ": fstat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    return Status::InvalidArgument(path + ": neither a regular file nor a block device");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    return Status::Busy(path + ": locked by an open pool or another program: not written");
  }
  ARC_ASSIGN_OR_RETURN(uint64_t size_bytes, FdSize(fd));
  // A descriptor of its own: `fd` may be O_DIRECT, which the probe's reads
  // into unaligned memory would fail on.
  int probe_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (probe_fd < 0) return Status::IOError(path + ": open: " + std::strerror(errno));
  Result<std::optional<format::Signature>> sig = format::FindSignature(probe_fd, size_bytes, path);
  ::close(probe_fd);
  ARC_RETURN_IF_ERROR(sig.status());
  if (sig->has_value()) {
    return Status::InvalidArgument(path + ": holds " + (*sig)->description +
                                   ": a baseline never writes over it");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<FileVolume>> FileVolume::Open(const std::string& path, uint64_t size_bytes,
                                                     bool direct, bool fill) {
  int flags = O_RDWR | O_CLOEXEC | (direct ? O_DIRECT : 0);
  int fd = ::open(path.c_str(), flags);
  bool created = false;
  if (fd < 0 && errno == ENOENT) {
    if (size_bytes == 0) return Status::NotFound(path + " does not exist and no size was given");
    fd = ::open(path.c_str(), flags | O_CREAT | O_EXCL, 0644);
    created = true;
  }
  if (fd < 0) return Status::IOError("open " + path + ": " + std::strerror(errno));
  if (!created) {
    Status s = CheckOursToWrite(fd, path);
    if (!s.ok()) {
      ::close(fd);
      return s;
    }
  }
  auto size_or = FdSize(fd);
  if (!size_or.ok()) {
    ::close(fd);
    return size_or.status();
  }
  uint64_t size = *size_or;
  if (size < size_bytes) {
    Status s = fill && (created || size == 0) ? FillFile(fd, size_bytes, path) : Status::Ok();
    if (s.ok() && ftruncate(fd, static_cast<off_t>(size_bytes)) != 0) {
      s = Status::IOError(path + ": ftruncate: " + std::strerror(errno));
    }
    if (!s.ok()) {
      ::close(fd);
      return s;
    }
    size = size_bytes;
  }
  VolumeInfo info;
  info.name = path;
  info.size_bytes = size;
  info.record_size_bytes = 4096;
  info.compression = "off";
  return std::unique_ptr<FileVolume>(new FileVolume(fd, path, info));
}

FileVolume::~FileVolume() { ::close(fd_); }

void FileVolume::DropPageCache() {
  fdatasync(fd_);
  posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
}

Status FileVolume::ErrnoStatus(const char* op, uint64_t offset, int err) const {
  return Status::IOError(path_ + ": " + op + " at offset " + std::to_string(offset) + ": " +
                         std::strerror(err));
}

void FileVolume::Submit(VolumeRequest req, Completion done) {
  Status s = CheckRange(VolumeOpName(req.op), req.offset, req.length, info_.size_bytes);
  if (s.ok()) s = Execute(req);
  done(std::move(s));
}

Status FileVolume::Execute(const VolumeRequest& req) {
  const off_t offset = static_cast<off_t>(req.offset), length = static_cast<off_t>(req.length);
  switch (req.op) {
    case VolumeOp::kRead: return ReadNow(req.offset, req.out);
    case VolumeOp::kWrite: return WriteNow(req);
    case VolumeOp::kFlush:
      return fdatasync(fd_) == 0 ? Status::Ok() : ErrnoStatus("fdatasync", 0, errno);
    case VolumeOp::kTrim:
      if (fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length) != 0) {
        return ErrnoStatus("trim", req.offset, errno);
      }
      return Status::Ok();
    case VolumeOp::kWriteZeroes:
      if (fallocate(fd_, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, offset, length) != 0) {
        return ErrnoStatus("write zeroes", req.offset, errno);
      }
      return Status::Ok();
    case VolumeOp::kCache:
      posix_fadvise(fd_, offset, length, POSIX_FADV_WILLNEED);
      return Status::Ok();
    case VolumeOp::kBlockStatus:
      *req.extents = {Extent{req.offset, req.length, false, false}};
      return Status::Ok();
  }
  return Status::InvalidArgument(path_ + ": unknown operation");
}

Status FileVolume::ReadNow(uint64_t offset, std::span<uint8_t> out) {
  for (size_t at = 0; at < out.size();) {
    ssize_t n = pread(fd_, out.data() + at, out.size() - at, static_cast<off_t>(offset + at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return n == 0 ? Status::IOError(path_ + ": short read") : ErrnoStatus("read", offset, errno);
    }
    at += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status FileVolume::WriteNow(const VolumeRequest& req) {
  const std::span<const uint8_t> data = req.bytes();
  if (data.size() != req.length) return Status::InvalidArgument(path_ + ": a prepared write of pieces");
  const int rwf = (req.flags & kFua) ? RWF_DSYNC : 0;
  for (size_t at = 0; at < data.size();) {
    iovec iov{const_cast<uint8_t*>(data.data() + at), data.size() - at};
    ssize_t n = pwritev2(fd_, &iov, 1, static_cast<off_t>(req.offset + at), rwf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoStatus("write", req.offset, errno);
    at += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<std::shared_ptr<Volume>> FileVolumeProvider::OpenVolume(const VolumeSpec& req) {
  if (req.name.empty() || req.name.find('/') != std::string::npos) {
    return Status::InvalidArgument("bad volume name '" + req.name + "'");
  }
  std::string dir = req.directory.empty() ? root_ : req.directory;
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<FileVolume> v,
                       FileVolume::Open(dir + "/" + req.name, req.size_bytes, req.direct, fill_));
  // fio's invalidate=1 (its default): start without the file in the page cache.
  if (req.invalidate) v->DropPageCache();
  return std::shared_ptr<Volume>(std::move(v));
}

}  // namespace arcstore::bench
