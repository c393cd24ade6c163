// Fuzz target: the space log block decoder.
#include "format/fuzz/decoders_fuzzer.h"
#include "format/space_log.h"

using namespace arcstore::format;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto b = DecodeSpaceLogBlock(std::span<const uint8_t>(data, size));
  if (!b.ok()) return 0;
  auto again = EncodeSpaceLogBlock(*b);
  fuzz::Require(again.ok(), "a decoded space log block re-encodes");
  fuzz::Require(again->size() == size, "same length");
  auto twice = DecodeSpaceLogBlock(*again);
  fuzz::Require(twice.ok() && *twice == *b, "decode(encode(x)) == x");
  return 0;
}
