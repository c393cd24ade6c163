// Fuzz target: an indirect block read through its parent pointer. The
// pointer is built over the input (so the checksum passes and the decoder
// sees the hostile bytes). Input: byte 0 chooses the compression, bytes 1..3
// the logical size (little-endian), the rest is the physical block.
#include "format/block_pointer.h"
#include "format/fuzz/decoders_fuzzer.h"
#include "format/indirect_block.h"

using namespace arcstore::format;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5 || size > kMaxBlockBytes) return 0;
  std::span<const uint8_t> body(data + 4, size - 4);
  Compression c = static_cast<Compression>(data[0] % 3);
  uint32_t logical = c == Compression::kOff ? static_cast<uint32_t>(body.size())
                                            : (data[1] | data[2] << 8 | data[3] << 16);
  if (logical == 0) return 0;
  BlockPointer bp = PointerTo(
      {.type = BlockType::kIndirect, .level = 1, .compression = c, .birth_txg = 1000, .fill = 1}, 0,
      1, body, logical);
  auto payload = ReadBlockPayload(bp, body);
  if (!payload.ok()) return 0;
  auto b = DecodeIndirectBlock(*payload);
  if (!b.ok()) return 0;
  auto again = EncodeIndirectBlock(*b);
  fuzz::Require(again.ok(), "a decoded indirect block re-encodes");
  fuzz::Require(again->size() == payload->size(), "same length");
  auto twice = DecodeIndirectBlock(*again);
  fuzz::Require(twice.ok() && *twice == *b, "decode(encode(x)) == x");
  return 0;
}
