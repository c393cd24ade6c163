// Block compression: lz4 (liblz4, block format) and zstd (libzstd, one frame).
//
// Compress keeps a result only when it saves at least 1/8 of the input
// (physical <= logical - logical/8); otherwise the block is stored
// uncompressed and the caller records Compression::kOff. Blocks of 32 KiB
// or more are first sampled (4 KiB at the start and in the middle, with
// lz4) unless the block before them compressed (see Compressor): when
// neither sample saves 1/8 the block is stored uncompressed without
// compressing the rest (early abort). The output is bounded: the
// compressor is never allowed to write more than that limit.
// Decompress treats its input as hostile and succeeds only when the output
// is exactly the expected logical size.
//
// A Compressor keeps its compression contexts from block to block (see
// its comment); the one-off CompressBlock makes fresh ones for each call.
//
// Thread-safety: the free functions are stateless (each call uses its own
// contexts); a Compressor belongs to one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "base/result.h"

namespace arcstore::format {

enum class Compression : uint8_t { kOff = 0, kLz4 = 1, kZstd = 2 };
inline constexpr uint8_t kMaxCompressionValue = 2;

std::string_view CompressionName(Compression c);
// "off", "lz4", "zstd"; the error names the text and the choices.
Result<Compression> ParseCompression(std::string_view text);

// Largest logical size any block may have (and the limit decompression
// enforces): 16 MiB.
inline constexpr uint32_t kMaxBlockBytes = 16u << 20;

inline constexpr int kDefaultZstdLevel = 3;

// What a compression stored: the algorithm used (kOff when compression did
// not pay or was not asked for) and the physical size.
struct Compressed {
  Compression used = Compression::kOff;
  uint32_t physical_bytes = 0;
};

// Compressor: block compression for a thread that compresses block after
// block (a txg's writer), with what a one-off call would set up each time
// kept between blocks:
//
// - contexts: lz4's 16 KiB match table is reset in place instead of
//   cleared, and zstd's context (hundreds of KiB of tables at level 3) is
//   made once, at the first zstd block, instead of allocated and freed per
//   block.
// - early abort: the samples only pay when they abort. After a block that
//   compressed, the next one is compressed whole without sampling (data
//   that compressed tends to go on compressing: a database's pages, a log
//   file); after a sampled block that aborted or a whole block that did
//   not pay, blocks are sampled again. A block that follows a compressed
//   one and does not compress costs one whole try, once per such turn.
//
//   block --last one compressed--> compress whole --pays--> compressed
//         |                                        \------> raw, sample next
//         \--otherwise--> samples --one pays--> compress whole (as above)
//                                 \--none-----> raw, sample next
//
// Which blocks end up compressed differs from a fresh Compressor's (the
// one-off CompressBlock below) only for blocks whose samples do not
// compress but whose whole does (stored compressed here when they follow a
// compressed block); both are valid.
class Compressor {
 public:
  Compressor();
  ~Compressor();
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  // Compresses `in` (1 byte to kMaxBlockBytes) into `out`, whose size must
  // be at least in.size(), and returns what was stored (when kOff, `in` is
  // copied into `out`). Compression pays when it saves 1/8 of the block
  // and, stored in units of `unit_bytes` (the allocation unit), at least
  // one unit: a block of one unit is never compressed (it would take the
  // same space and cost a decompression on every read).
  Result<Compressed> CompressBlock(Compression algo, std::span<const uint8_t> in,
                                   std::span<uint8_t> out, int zstd_level = kDefaultZstdLevel,
                                   uint32_t unit_bytes = 1);
  // CompressBlock without the copy: when it returns kOff, `out` holds
  // nothing useful and the caller stores `in` as it is (a writer that can
  // send the logical bytes to the device directly).
  Result<Compressed> TryCompressBlock(Compression algo, std::span<const uint8_t> in,
                                      std::span<uint8_t> out, int zstd_level = kDefaultZstdLevel,
                                      uint32_t unit_bytes = 1);

  // Blocks compressed whole without sampling (they followed a compressed
  // block), and blocks sampled.
  uint64_t unsampled_blocks() const { return unsampled_blocks_; }
  uint64_t sampled_blocks() const { return sampled_blocks_; }

 private:
  struct Contexts;
  // The bytes compressed into `out` (at most `limit`), or 0 when they do
  // not fit.
  size_t Compress(Compression algo, std::span<const uint8_t> in, uint8_t* out, size_t limit,
                  int zstd_level);
  bool SamplesCompress(std::span<const uint8_t> in, uint8_t* scratch);

  std::unique_ptr<Contexts> contexts_;
  bool last_compressed_ = false;
  uint64_t unsampled_blocks_ = 0;
  uint64_t sampled_blocks_ = 0;
};

// Compressor::CompressBlock with fresh contexts, for a caller that
// compresses once (a tool, a test).
Result<Compressed> CompressBlock(Compression algo, std::span<const uint8_t> in,
                                 std::span<uint8_t> out, int zstd_level = kDefaultZstdLevel,
                                 uint32_t unit_bytes = 1);

// Decompresses exactly out.size() bytes (the logical size) from `in`.
// Corruption when the input is malformed or yields any other size.
Status DecompressBlock(Compression algo, std::span<const uint8_t> in, std::span<uint8_t> out);

}  // namespace arcstore::format
