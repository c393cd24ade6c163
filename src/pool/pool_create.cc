// Pool::Create: what it refuses before it writes a label.
//
//   path
//    |-- absent --------------> a new file (size required), created with
//    |                          O_EXCL, locked, written once, formatted
//    |-- regular file --+
//    |-- block device --+--> exclusive flock (as a writable open takes it):
//    |                  |      held by a served or open pool -> Busy, always
//    |                  |    block device: O_EXCL open (the kernel refuses it
//    |                  |      while mounted or claimed) -> Busy, always
//    |                  |    an existing file, or any signature (arcstore
//    |                  |      label, filesystem, partition table) -> refused
//    |                  |      unless force
//    |                  |    size: a pool takes the whole file or device;
//    |                  |      --size must be absent or equal it
//    |                  +--> formatted with the lock held
//    +-- anything else -------> refused (directory, character device, ...)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "arcstore/pool.h"
#include "base/units.h"
#include "format/signature.h"
#include "io/file_device.h"
#include "pool/device_probe.h"
#include "pool/pool_impl.h"

namespace arcstore {

namespace {

Status Errno(const std::string& path, const char* what, int err) {
  return Status::IOError("pool " + path + ": " + what + ": " + std::strerror(err));
}

Status FormatLocked(const std::string& path, const PoolCreateOptions& options) {
  io::FileDeviceOptions fo;
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::FileDevice> dev, io::FileDevice::Open(path, fo));
  return pool::PoolImpl::Format(dev.get(), options.name).WithContext("pool " + path);
}

Status CreateOnNewFile(const std::string& path, const PoolCreateOptions& options) {
  if (path.rfind("/dev/", 0) == 0) {
    return Status::NotFound("pool " + path + ": no such device (a pool file is never made "
                            "under /dev)");
  }
  if (options.size_bytes == 0) {
    return Status::InvalidArgument("pool " + path +
                                   ": no such file or device, and a file-backed pool needs a "
                                   "size (--size 8G, at least 16M)");
  }
  io::FileCreateOptions fc;
  fc.size_bytes = options.size_bytes;
  fc.sparse = options.sparse;
  fc.progress = options.progress;
  ARC_RETURN_IF_ERROR(io::CreateFileForDevice(path, fc).WithContext("pool " + path));
  ARC_ASSIGN_OR_RETURN(io::FileLock lock, io::FileLock::Acquire(path, /*exclusive=*/true));
  return FormatLocked(path, options);
}

Status CheckSize(const std::string& path, const PoolCreateOptions& options, bool block,
                 uint64_t have_bytes) {
  if (options.size_bytes == 0 || options.size_bytes == have_bytes) return Status::Ok();
  const std::string what = block ? "the device" : "the existing file";
  if (options.size_bytes > have_bytes) {
    return Status::InvalidArgument("pool " + path + ": --size " + FormatBytes(options.size_bytes) +
                                   " is larger than " + what + " (" + FormatBytes(have_bytes) +
                                   ")");
  }
  return Status::InvalidArgument("pool " + path + ": a pool takes all of " + what + " (" +
                                 FormatBytes(have_bytes) + "); leave out --size");
}

Status CreateOnExisting(const std::string& path, const PoolCreateOptions& options,
                        const struct stat& st) {
  ARC_ASSIGN_OR_RETURN(io::FileLock lock, io::FileLock::Acquire(path, /*exclusive=*/true));
  Result<pool::DeviceProbe> probe = pool::ProbeExisting(path, st, "pool " + path);
  if (probe.status().code() == StatusCode::kBusy) {
    return Status::Busy(probe.status().message() + ": not formatted");
  }
  ARC_RETURN_IF_ERROR(probe.status());
  const bool block = probe->block;
  const uint64_t have_bytes = probe->size_bytes;
  if (!options.force) {
    if (probe->signature) {
      return Status::AlreadyExists("pool " + path + ": holds " + probe->signature->description +
                                   "; pool create would destroy it (--force formats it anyway)");
    }
    if (!block) {
      return Status::AlreadyExists("pool " + path + ": the file exists; pool create makes a new "
                                   "file (--force formats an existing one)");
    }
  }
  ARC_RETURN_IF_ERROR(CheckSize(path, options, block, have_bytes));
  return FormatLocked(path, options);
}

}  // namespace

Status Pool::Create(const std::string& path, const PoolCreateOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return CreateOnNewFile(path, options);
    return Errno(path, "stat", errno);
  }
  if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) return CreateOnExisting(path, options, st);
  return Status::InvalidArgument("pool " + path +
                                 ": neither a regular file nor a block device; a pool goes on one "
                                 "of those");
}

}  // namespace arcstore
