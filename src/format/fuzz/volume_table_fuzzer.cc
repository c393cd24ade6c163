// Fuzz target: the volume table decoder.
#include "format/fuzz/decoders_fuzzer.h"
#include "format/volume_table.h"

using namespace arcstore::format;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t = DecodeVolumeTable(std::span<const uint8_t>(data, size));
  if (!t.ok()) return 0;
  auto again = EncodeVolumeTable(*t);
  fuzz::Require(again.ok(), "a decoded volume table re-encodes");
  fuzz::Require(again->size() == size, "same length");
  auto twice = DecodeVolumeTable(*again);
  fuzz::Require(twice.ok() && *twice == *t, "decode(encode(x)) == x");
  return 0;
}
