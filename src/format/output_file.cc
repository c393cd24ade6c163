#include "format/output_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "format/signature.h"

namespace arcstore::format {

namespace {

Status Errno(const std::string& path, const char* what, int err) {
  return Status::IOError("output " + path + ": " + what + ": " + std::strerror(err));
}

std::string KindOf(mode_t mode) {
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Opens an existing `path` to be replaced, or says why it must not be.
Result<int> OpenToReplace(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    struct stat st;
    if ((err == ELOOP || err == ENXIO || err == EISDIR) && ::lstat(path.c_str(), &st) == 0) {
      return Status::InvalidArgument("output " + path + " is " + KindOf(st.st_mode) +
                                     ": only a regular file is ever replaced");
    }
    return Errno(path, "open to replace", err);
  }
  auto refuse = [fd](Status s) -> Result<int> {
    ::close(fd);
    return s;
  };
  struct stat st;
  if (::fstat(fd, &st) != 0) return refuse(Errno(path, "fstat", errno));
  if (!S_ISREG(st.st_mode)) {
    return refuse(Status::InvalidArgument("output " + path + " is " + KindOf(st.st_mode) +
                                          ": only a regular file is ever replaced"));
  }
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) {
      return refuse(Status::Busy("output " + path +
                                 " is locked by an open pool or another program: not replaced"));
    }
    return refuse(Errno(path, "flock", errno));
  }
  Result<std::optional<Signature>> sig =
      FindSignature(fd, static_cast<uint64_t>(st.st_size), "output " + path);
  if (!sig.ok()) return refuse(sig.status());
  if (sig->has_value()) {
    return refuse(Status::InvalidArgument("output " + path + " holds " + (*sig)->description +
                                          ": never replaced by an output (remove it yourself "
                                          "if it is no longer wanted)"));
  }
  if (::ftruncate(fd, 0) != 0) return refuse(Errno(path, "truncate", errno));
  // The probes read through the descriptor: the output starts at byte 0,
  // not where they left the offset (a hole of NUL bytes otherwise).
  if (::lseek(fd, 0, SEEK_SET) != 0) return refuse(Errno(path, "seek", errno));
  return fd;
}

}  // namespace

Status OutputFileOptions::Validate() const {
  if (mode > 0777) {
    return Status::InvalidArgument("output file mode " + std::to_string(mode) + " beyond 0777");
  }
  return Status::Ok();
}

Result<std::string> ResolveOutputPath(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("output path is empty");
  if (path.find('\0') != std::string::npos) {
    return Status::InvalidArgument("output path holds a NUL byte");
  }
  std::filesystem::path p(path);
  std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return Status::InvalidArgument("output " + path + ": names a directory, not a file");
  }
  std::error_code ec;
  std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::filesystem::path abs_dir = std::filesystem::absolute(dir, ec);
  char resolved[PATH_MAX];
  if (ec || ::realpath(abs_dir.c_str(), resolved) == nullptr) {
    return Status::InvalidArgument("output " + path + ": its directory " + dir.string() +
                                   " does not exist");
  }
  struct stat st;
  if (::stat(resolved, &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("output " + path + ": " + dir.string() + " is not a directory");
  }
  return (std::filesystem::path(resolved) / name).string();
}

Result<int> CreateOutputFile(const std::string& path, const OutputFileOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  ARC_ASSIGN_OR_RETURN(std::string resolved, ResolveOutputPath(path));
  if (resolved != path) {
    return Status::InvalidArgument("output " + path + ": not an absolute path with its directory "
                                   "resolved (" + resolved + ")");
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                  options.mode);
  if (fd >= 0) {
    // Held for as long as the output is written, as a replaced file's is.
    (void)::flock(fd, LOCK_EX | LOCK_NB);
    return fd;
  }
  if (errno != EEXIST) return Errno(path, "create", errno);
  if (!options.replace_existing) {
    return Status::AlreadyExists("output " + path + " exists: not replaced (--force replaces "
                                 "a regular file that is not a pool)");
  }
  return OpenToReplace(path);
}

Result<std::string> ReserveOutputFile(const std::string& path, const OutputFileOptions& options) {
  ARC_ASSIGN_OR_RETURN(std::string resolved, ResolveOutputPath(path));
  ARC_ASSIGN_OR_RETURN(int fd, CreateOutputFile(resolved, options));
  ::close(fd);
  return resolved;
}

}  // namespace arcstore::format
