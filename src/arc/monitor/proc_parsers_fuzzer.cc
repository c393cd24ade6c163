// libFuzzer target: every /proc and cgroup parser on arbitrary text. Each
// returns a value or a Corruption naming file and line; none may crash.
// Seed corpus: testdata/ (the fixture trees' files).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "arc/monitor/proc_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arcstore::memmon;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ParseMeminfo(text, "/f").status().IgnoreError();
  ParsePsi(text, "/f").status().IgnoreError();
  ParseLimit(text, "/f").status().IgnoreError();
  ParseCounter(text, "/f").status().IgnoreError();
  ParseKeyValues(text, "/f").status().IgnoreError();
  ParseProcCgroup(text, "/f").status().IgnoreError();
  ParseMountinfo(text, "/f").status().IgnoreError();
  return 0;
}
