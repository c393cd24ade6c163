// Fuzz target: the intent log block decoder. The checksum is re-sealed over
// the mutated bytes half of the time, so that the record checks are reached.
#include <cstring>

#include "base/checksum.h"
#include "format/encoding.h"
#include "format/fuzz/decoders_fuzzer.h"
#include "format/intent_log.h"

using namespace arcstore::format;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> in(data, data + size);
  if (size >= kLogBlockHeaderBytes + 16 && (data[0] & 1) == 0) {
    arcstore::Xxh3_128Stream s;
    s.Update(in.data(), 48);
    s.Update(in.data() + kLogBlockHeaderBytes, in.size() - kLogBlockHeaderBytes);
    StoreChecksum(in.data() + 48, s.Digest());
  }
  LogBlockHeader h;
  auto records = DecodeLogBlock(in, &h);
  if (!records.ok()) return 0;
  auto again = EncodeLogBlock(h.log_guid, h.sequence, *records, h.block_bytes);
  fuzz::Require(again.ok() && *again == in, "re-encoding gives the same bytes");
  return 0;
}
