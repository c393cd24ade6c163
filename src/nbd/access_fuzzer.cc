// libFuzzer target: the access file parser (access.h) on arbitrary text; a
// policy that parses is looked up for a few identities and volumes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nbd/access.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arcstore::nbd;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto p = AccessPolicy::Parse(text, "fuzz");
  if (!p.ok()) return 0;
  for (const char* id : {"alice", kAnonymousIdentity, kUnixIdentity, ""}) {
    for (const char* vol : {"vol0", "*", ""}) (void)(*p)->Lookup(id, vol);
  }
  return 0;
}
