// FileVolume: an arcstore::Volume over a plain file or block device, with
// pread/pwrite (O_DIRECT when asked), fdatasync for Flush, RWF_DSYNC for
// FUA writes and hole punching for Trim. It is the bench's raw-disk
// baseline: the same job measured on the same disk in the same run.
//
// Every operation completes inline (synchronously) on the caller's thread.
// With O_DIRECT, buffers, offsets and lengths must be aligned to the
// device's logical block size (the bench's buffers are 4 KiB aligned).
//
// Thread-safety: all methods may be called concurrently (pread/pwrite are).
// The volume owns its file descriptor.
#pragma once

#include <memory>
#include <string>

#include "bench/volume_provider.h"

namespace arcstore::bench {

class FileVolume final : public Volume {
 public:
  // Opens `path`; creates it with `size_bytes` when missing (size 0: must
  // exist) and, when `fill` is set, writes every byte once so that the file
  // has no holes (fio's "laying out IO file").
  static Result<std::unique_ptr<FileVolume>> Open(const std::string& path, uint64_t size_bytes,
                                                  bool direct, bool fill);
  ~FileVolume() override;
  // Writes back and drops the file's pages from the OS page cache (fio's
  // invalidate=1), so that buffered reads start cold.
  void DropPageCache();

  VolumeInfo info() const override { return info_; }
  void Submit(VolumeRequest req, Completion done) override;

 private:
  FileVolume(int fd, std::string path, VolumeInfo info) : fd_(fd), path_(std::move(path)), info_(std::move(info)) {}
  Status ErrnoStatus(const char* op, uint64_t offset, int err) const;
  // Submit's work, after the range check.
  Status Execute(const VolumeRequest& req);
  Status ReadNow(uint64_t offset, std::span<uint8_t> out);
  Status WriteNow(const VolumeRequest& req);

  const int fd_;
  const std::string path_;
  const VolumeInfo info_;
};

// Volumes are files `directory/name` (the job's directory, else `root`).
class FileVolumeProvider final : public VolumeProvider {
 public:
  explicit FileVolumeProvider(std::string root, bool fill_new_files = true)
      : root_(std::move(root)), fill_(fill_new_files) {}
  Result<std::shared_ptr<Volume>> OpenVolume(const VolumeSpec& req) override;

 private:
  std::string root_;
  bool fill_;
};

}  // namespace arcstore::bench
