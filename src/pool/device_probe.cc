// ProbeExisting (see device_probe.h).
#include "pool/device_probe.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace arcstore::pool {

namespace {

// A descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Status Errno(const std::string& who, const char* what, int err) {
  return Status::IOError(who + ": " + what + ": " + std::strerror(err));
}

}  // namespace

Result<DeviceProbe> ProbeExisting(const std::string& path, const struct stat& st,
                                  const std::string& who) {
  DeviceProbe p;
  p.block = S_ISBLK(st.st_mode);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | (p.block ? O_EXCL : 0)));
  if (fd.get() < 0) {
    if (p.block && errno == EBUSY) {
      return Status::Busy(who + ": the device is in use (mounted, or held by another program "
                                "or a device mapper)");
    }
    return Errno(who, "open", errno);
  }
  p.size_bytes = static_cast<uint64_t>(st.st_size);
  if (p.block && ::ioctl(fd.get(), BLKGETSIZE64, &p.size_bytes) != 0) {
    return Errno(who, "BLKGETSIZE64", errno);
  }
  ARC_ASSIGN_OR_RETURN(p.signature, format::FindSignature(fd.get(), p.size_bytes, who));
  return p;
}

}  // namespace arcstore::pool
