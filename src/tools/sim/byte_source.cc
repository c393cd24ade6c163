#include "tools/sim/byte_source.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace arcstore::sim {
namespace {

Status FileError(const std::string& path, const char* what) {
  return Status::IOError(path + ": " + what + ": " + std::strerror(errno));
}

class PlainSource final : public ByteSource {
 public:
  PlainSource(std::string path, FILE* f) : path_(std::move(path)), f_(f) {}
  ~PlainSource() override { std::fclose(f_); }
  Result<size_t> Read(char* buf, size_t n) override {
    size_t got = std::fread(buf, 1, n, f_);
    if (got == 0 && std::ferror(f_)) return FileError(path_, "read");
    offset_ += got;
    return got;
  }
  uint64_t file_offset() const override { return offset_; }
  const char* encoding() const override { return "plain"; }

 private:
  std::string path_;
  FILE* f_;
  uint64_t offset_ = 0;
};

class ZstdSource final : public ByteSource {
 public:
  ZstdSource(std::string path, FILE* f)
      : path_(std::move(path)), f_(f), ds_(ZSTD_createDStream()), in_buf_(ZSTD_DStreamInSize()) {
    ZSTD_initDStream(ds_);
  }
  ~ZstdSource() override {
    ZSTD_freeDStream(ds_);
    std::fclose(f_);
  }
  Result<size_t> Read(char* buf, size_t n) override {
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0) {
      // More input only once the decoder has flushed what it holds (a call
      // that filled the output buffer may have more to give).
      if (in_.pos == in_.size && !maybe_pending_) {
        if (eof_) {
          if (!frame_done_) return Status::Corruption(path_ + ": zstd stream ends mid-frame");
          return size_t{0};
        }
        size_t got = std::fread(in_buf_.data(), 1, in_buf_.size(), f_);
        if (got == 0) {
          if (std::ferror(f_)) return FileError(path_, "read");
          eof_ = true;
          continue;
        }
        offset_ += got;
        in_ = ZSTD_inBuffer{in_buf_.data(), got, 0};
      }
      size_t r = ZSTD_decompressStream(ds_, &out, &in_);
      if (ZSTD_isError(r)) {
        return Status::Corruption(path_ + ": zstd: " + ZSTD_getErrorName(r));
      }
      frame_done_ = (r == 0);
      maybe_pending_ = (out.pos == out.size);
    }
    return out.pos;
  }
  uint64_t file_offset() const override { return offset_; }
  const char* encoding() const override { return "zstd"; }

 private:
  std::string path_;
  FILE* f_;
  ZSTD_DStream* ds_;
  std::vector<char> in_buf_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  bool eof_ = false;
  bool frame_done_ = true;
  bool maybe_pending_ = false;
  uint64_t offset_ = 0;
};

class GzipSource final : public ByteSource {
 public:
  GzipSource(std::string path, gzFile f) : path_(std::move(path)), f_(f) {}
  ~GzipSource() override { gzclose(f_); }
  Result<size_t> Read(char* buf, size_t n) override {
    int got = gzread(f_, buf, static_cast<unsigned>(std::min<size_t>(n, 1u << 30)));
    if (got < 0) {
      int err = 0;
      const char* msg = gzerror(f_, &err);
      return Status::Corruption(path_ + ": gzip: " + msg);
    }
    return static_cast<size_t>(got);
  }
  uint64_t file_offset() const override { return static_cast<uint64_t>(gzoffset(f_)); }
  const char* encoding() const override { return "gzip"; }

 private:
  std::string path_;
  gzFile f_;
};

}  // namespace

Result<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path, uint64_t* file_bytes) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return FileError(path, "open");
  }
  std::fseek(f, 0, SEEK_END);
  *file_bytes = static_cast<uint64_t>(std::ftell(f));
  std::fseek(f, 0, SEEK_SET);
  unsigned char magic[6] = {};
  size_t got = std::fread(magic, 1, sizeof(magic), f);
  std::fseek(f, 0, SEEK_SET);
  std::setvbuf(f, nullptr, _IOFBF, 1 << 18);
  if (got >= 4 && magic[0] == 0x28 && magic[1] == 0xB5 && magic[2] == 0x2F && magic[3] == 0xFD) {
    return std::unique_ptr<ByteSource>(new ZstdSource(path, f));
  }
  if (got >= 2 && magic[0] == 0x1F && magic[1] == 0x8B) {
    std::fclose(f);
    gzFile gz = gzopen(path.c_str(), "rb");
    if (gz == nullptr) return FileError(path, "gzopen");
    gzbuffer(gz, 1 << 18);
    return std::unique_ptr<ByteSource>(new GzipSource(path, gz));
  }
  if (got >= 6 && std::memcmp(magic, "\xFD" "7zXZ\0", 6) == 0) {
    std::fclose(f);
    return Status::NotSupported(path + ": xz-compressed; decompress it first (xz -dk)");
  }
  if (got >= 3 && std::memcmp(magic, "BZh", 3) == 0) {
    std::fclose(f);
    return Status::NotSupported(path + ": bzip2-compressed; decompress it first (bunzip2 -k)");
  }
  return std::unique_ptr<ByteSource>(new PlainSource(path, f));
}

}  // namespace arcstore::sim
