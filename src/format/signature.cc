#include "format/signature.h"

#include <blkid/blkid.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "format/encoding.h"
#include "format/label.h"

namespace arcstore::format {

namespace {

// Reads [offset, offset + bytes); a short read (the end of the file) leaves
// zeros.
Status ReadFully(int fd, uint64_t offset, std::vector<uint8_t>& out, const std::string& name) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status::IOError(name + ": read at offset " + std::to_string(offset + done) + ": " +
                             std::strerror(errno));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<std::optional<Signature>> FindLabel(int fd, uint64_t size_bytes, const std::string& name) {
  if (size_bytes < kLabelHeaderRegionBytes) return std::optional<Signature>();
  std::vector<uint8_t> header(kLabelHeaderRegionBytes);
  bool magic_seen = false;
  for (uint64_t offset : {uint64_t{0}, BackHeaderOffset(size_bytes)}) {
    ARC_RETURN_IF_ERROR(ReadFully(fd, offset, header, name));
    Result<LabelHeader> h = DecodeLabelHeader(header);
    if (h.ok()) {
      std::string pool = h->config.Get("pool_name").value_or("?");
      return std::optional<Signature>(Signature{
          Signature::Kind::kArcstorePool,
          "arcstore pool '" + pool + "' (guid " + Hex64(h->pool_guid) + ")"});
    }
    magic_seen = magic_seen || LoadLe64(header.data()) == kLabelMagic;
  }
  if (!magic_seen) return std::optional<Signature>();
  return std::optional<Signature>(
      Signature{Signature::Kind::kArcstorePool, "a damaged arcstore label"});
}

// libblkid's superblock (filesystems, RAID and volume-manager members) and
// partition-table probes.
Result<std::optional<Signature>> FindOther(int fd, uint64_t size_bytes, const std::string& name) {
  blkid_probe pr = blkid_new_probe();
  if (pr == nullptr) return Status::ResourceExhausted(name + ": cannot make a libblkid probe");
  std::optional<Signature> found;
  int rc = blkid_probe_set_device(pr, fd, 0, static_cast<blkid_loff_t>(size_bytes));
  if (rc == 0) {
    blkid_probe_enable_superblocks(pr, 1);
    blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
    blkid_probe_enable_partitions(pr, 1);
    blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
    rc = blkid_do_safeprobe(pr);
  }
  if (rc == 0) {
    const char* type = nullptr;
    if (blkid_probe_lookup_value(pr, "TYPE", &type, nullptr) == 0 && type != nullptr) {
      const char* usage = nullptr;
      blkid_probe_lookup_value(pr, "USAGE", &usage, nullptr);
      std::string what = usage != nullptr && std::strcmp(usage, "filesystem") == 0
                             ? " filesystem"
                             : (usage != nullptr ? std::string(" (") + usage + ")" : "");
      found = Signature{Signature::Kind::kOther, std::string(type) + what};
    } else if (blkid_probe_lookup_value(pr, "PTTYPE", &type, nullptr) == 0 && type != nullptr) {
      found = Signature{Signature::Kind::kOther, std::string(type) + " partition table"};
    } else {
      found = Signature{Signature::Kind::kOther, "a signature libblkid knows"};
    }
  } else if (rc == -2) {
    found = Signature{Signature::Kind::kOther, "several signatures (libblkid finds them ambiguous)"};
  }
  blkid_free_probe(pr);
  if (rc == -1) return Status::IOError(name + ": libblkid could not probe it");
  return found;
}

}  // namespace

Result<std::optional<Signature>> FindSignature(int fd, uint64_t size_bytes,
                                               const std::string& name) {
  if (size_bytes == 0) return std::optional<Signature>();
  ARC_ASSIGN_OR_RETURN(std::optional<Signature> label, FindLabel(fd, size_bytes, name));
  if (label) return label;
  return FindOther(fd, size_bytes, name);
}

}  // namespace arcstore::format
