// Fuzz target: the uberblock decoder. The checksum is re-sealed over the
// mutated bytes half of the time, so that the field checks are reached.
#include <cstring>

#include "format/encoding.h"
#include "format/fuzz/decoders_fuzzer.h"
#include "format/uberblock.h"

using namespace arcstore::format;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> in(data, data + size);
  if (size == kUberblockBytes && (data[0] & 1) == 0) {
    StoreChecksum(in.data() + kUberblockBytes - 16,
                  arcstore::Xxh3_128(in.data(), kUberblockBytes - 16));
  }
  auto ub = DecodeUberblock(in);
  if (!ub.ok()) return 0;
  fuzz::Require(EncodeUberblock(*ub) == in, "re-encoding gives the same bytes");
  return 0;
}
