// Fuzz target: the label header decoder (and its config TLV).
#include "format/fuzz/decoders_fuzzer.h"
#include "format/label.h"

using namespace arcstore::format;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto h = DecodeLabelHeader(std::span<const uint8_t>(data, size));
  if (!h.ok()) return 0;
  auto again = EncodeLabelHeader(*h);
  fuzz::Require(again.ok(), "a decoded label re-encodes");
  fuzz::Require(std::equal(data, data + size, again->begin()), "re-encoding gives the same bytes");
  return 0;
}
