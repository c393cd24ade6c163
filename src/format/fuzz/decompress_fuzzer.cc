// Fuzz target: lz4 and zstd decompression of hostile input into a buffer
// of a chosen logical size; success must mean exactly that size was filled.
#include "format/compression.h"
#include "format/fuzz/decoders_fuzzer.h"

using namespace arcstore::format;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  Compression c = (data[0] & 1) ? Compression::kZstd : Compression::kLz4;
  size_t logical = 1 + ((size_t{data[1]} << 8 | data[2]) * 16) % (1 << 20);
  std::vector<uint8_t> out(logical);
  arcstore::Status s = DecompressBlock(c, std::span<const uint8_t>(data + 3, size - 3), out);
  fuzz::Require(s.ok() || s.code() == arcstore::StatusCode::kCorruption, "only Corruption");
  if (s.ok()) {
    std::vector<uint8_t> packed(out.size());
    auto again = CompressBlock(c, out, packed);
    fuzz::Require(again.ok(), "decompressed data compresses");
  }
  return 0;
}
