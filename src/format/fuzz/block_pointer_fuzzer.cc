// Fuzz target: the block pointer decoder; the self-check is re-sealed half
// of the time so that the field checks are reached.
#include "format/block_pointer.h"
#include "format/encoding.h"
#include "format/fuzz/decoders_fuzzer.h"

using namespace arcstore::format;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> in(data, data + size);
  if (size == kBlockPointerBytes && (data[3] & 1) == 0) {
    in[3] = 0;
    StoreLe64(in.data() + 56, arcstore::Xxh3_64(in.data(), 56));
  }
  auto bp = DecodeBlockPointer(in);
  if (!bp.ok()) return 0;
  std::vector<uint8_t> again(kBlockPointerBytes);
  EncodeBlockPointer(*bp, again.data());
  bool all_zero = AllZero(in.data(), in.size());
  fuzz::Require(all_zero || again == in, "re-encoding gives the same bytes");
  return 0;
}
