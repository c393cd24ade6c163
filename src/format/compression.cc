#include "format/compression.h"

#include <algorithm>

#include <lz4.h>
#include <zstd.h>

#include <cstring>
#include <string>

#include "base/check.h"

namespace arcstore::format {

std::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kOff:
      return "off";
    case Compression::kLz4:
      return "lz4";
    case Compression::kZstd:
      return "zstd";
  }
  return "unknown";
}

Result<Compression> ParseCompression(std::string_view text) {
  if (text == "off") return Compression::kOff;
  if (text == "lz4") return Compression::kLz4;
  if (text == "zstd") return Compression::kZstd;
  return Status::InvalidArgument("compression '" + std::string(text) +
                                 "': must be off, lz4 or zstd");
}

// The most a compressed block may take: 7/8 of the logical size.
static size_t SavingLimit(size_t logical) { return logical - logical / 8; }

// The largest compressed size worth storing: 1/8 saved, and one unit.
static size_t PayingLimit(size_t logical, uint32_t unit) {
  const size_t units = (logical + unit - 1) / unit * unit;
  return std::min(SavingLimit(logical), units - unit);
}

// Early abort: a sampled block of at least kSampledBlockBytes (one whose
// predecessor did not compress) is compressed only if one of two
// kSampleBytes samples (its start and its middle) saves 1/8 with lz4.
// Incompressible data (media, encrypted or random blocks) then costs two
// small lz4 passes instead of one over 7/8 of the block; a sampled block
// whose samples both fail but whose rest would compress is stored
// uncompressed.
static constexpr size_t kSampledBlockBytes = 32 * 1024;
static constexpr size_t kSampleBytes = 4096;

struct Compressor::Contexts {
  Contexts() { ARC_CHECK(LZ4_initStream(&lz4, sizeof(lz4)) != nullptr); }
  ~Contexts() { ZSTD_freeCCtx(zstd); }
  LZ4_stream_t lz4;
  ZSTD_CCtx* zstd = nullptr;  // made at the first zstd block
};

Compressor::Compressor() : contexts_(std::make_unique<Contexts>()) {}
Compressor::~Compressor() = default;

size_t Compressor::Compress(Compression algo, std::span<const uint8_t> in, uint8_t* out,
                            size_t limit, int zstd_level) {
  if (algo == Compression::kLz4) {
    // A stream reset this way holds no dictionary: the block is compressed
    // on its own, exactly as a one-off call would.
    LZ4_resetStream_fast(&contexts_->lz4);
    const int n = LZ4_compress_fast_continue(
        &contexts_->lz4, reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out),
        static_cast<int>(in.size()), static_cast<int>(limit), 1);
    return n > 0 ? static_cast<size_t>(n) : 0;
  }
  if (contexts_->zstd == nullptr) {
    contexts_->zstd = ZSTD_createCCtx();
    ARC_CHECK(contexts_->zstd != nullptr) << "zstd: no memory for a compression context";
  }
  const size_t n = ZSTD_compressCCtx(contexts_->zstd, out, limit, in.data(), in.size(), zstd_level);
  return ZSTD_isError(n) ? 0 : n;
}

bool Compressor::SamplesCompress(std::span<const uint8_t> in, uint8_t* scratch) {
  for (size_t at : {size_t{0}, in.size() / 2}) {
    std::span<const uint8_t> sample = in.subspan(at, kSampleBytes);
    const size_t limit = SavingLimit(sample.size());
    const size_t n = Compress(Compression::kLz4, sample, scratch, limit, 0);
    if (n > 0 && n <= limit) return true;
  }
  return false;
}

Result<Compressed> Compressor::TryCompressBlock(Compression algo, std::span<const uint8_t> in,
                                                std::span<uint8_t> out, int zstd_level,
                                                uint32_t unit_bytes) {
  if (in.empty() || in.size() > kMaxBlockBytes) {
    return Status::InvalidArgument("compress: input of " + std::to_string(in.size()) +
                                   " bytes (1 to " + std::to_string(kMaxBlockBytes) + " allowed)");
  }
  if (out.size() < in.size()) {
    return Status::InvalidArgument("compress: output buffer smaller than the input");
  }
  if (unit_bytes == 0) return Status::InvalidArgument("compress: unit of 0 bytes");
  const size_t limit = PayingLimit(in.size(), unit_bytes);
  if (algo == Compression::kOff || limit == 0) {
    return Compressed{Compression::kOff, static_cast<uint32_t>(in.size())};
  }
  // The output buffer serves as the samples' scratch space (it is
  // overwritten below either way).
  bool worth_trying = true;
  if (in.size() >= kSampledBlockBytes) {
    if (last_compressed_) {
      ++unsampled_blocks_;
    } else {
      ++sampled_blocks_;
      worth_trying = SamplesCompress(in, out.data());
    }
  }
  const size_t n = worth_trying ? Compress(algo, in, out.data(), limit, zstd_level) : 0;
  last_compressed_ = n > 0 && n <= limit;
  if (last_compressed_) return Compressed{algo, static_cast<uint32_t>(n)};
  return Compressed{Compression::kOff, static_cast<uint32_t>(in.size())};
}

Result<Compressed> Compressor::CompressBlock(Compression algo, std::span<const uint8_t> in,
                                             std::span<uint8_t> out, int zstd_level,
                                             uint32_t unit_bytes) {
  ARC_ASSIGN_OR_RETURN(Compressed c, TryCompressBlock(algo, in, out, zstd_level, unit_bytes));
  if (c.used == Compression::kOff) std::memcpy(out.data(), in.data(), in.size());
  return c;
}

Result<Compressed> CompressBlock(Compression algo, std::span<const uint8_t> in,
                                 std::span<uint8_t> out, int zstd_level, uint32_t unit_bytes) {
  return Compressor().CompressBlock(algo, in, out, zstd_level, unit_bytes);
}

Status DecompressBlock(Compression algo, std::span<const uint8_t> in, std::span<uint8_t> out) {
  // Named only on failure: this runs on every block read.
  auto bad = [&](const std::string& why) {
    return Status::Corruption("decompress " + std::string(CompressionName(algo)) + " block of " +
                              std::to_string(in.size()) + " bytes to " +
                              std::to_string(out.size()) + ": " + why);
  };
  if (out.size() == 0 || out.size() > kMaxBlockBytes || in.empty()) {
    return bad("size out of bounds");
  }
  switch (algo) {
    case Compression::kOff:
      if (in.size() != out.size()) return bad("sizes differ");
      std::memcpy(out.data(), in.data(), in.size());
      return Status::Ok();
    case Compression::kLz4: {
      int n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()),
                                  reinterpret_cast<char*>(out.data()), static_cast<int>(in.size()),
                                  static_cast<int>(out.size()));
      if (n < 0 || static_cast<size_t>(n) != out.size()) {
        return bad("malformed or wrong size (" + std::to_string(n) + ")");
      }
      return Status::Ok();
    }
    case Compression::kZstd: {
      unsigned long long frame = ZSTD_getFrameContentSize(in.data(), in.size());
      if (frame != ZSTD_CONTENTSIZE_UNKNOWN && frame != out.size()) {
        return bad("frame says " + std::to_string(frame) + " bytes");
      }
      size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
      if (ZSTD_isError(n) || n != out.size()) {
        return bad(ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size");
      }
      return Status::Ok();
    }
  }
  return bad("unknown compression " + std::to_string(static_cast<int>(algo)));
}

}  // namespace arcstore::format
