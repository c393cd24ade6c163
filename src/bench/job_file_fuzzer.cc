// Fuzzes the job file reader and the value parsers with hostile text: any
// input must give a JobSet or an error, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bench/job_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arcstore::bench;
  std::string text(reinterpret_cast<const char*>(data), size);
  JobEnv env;
  env.getenv = [](const std::string& n) -> std::optional<std::string> {
    if (n == "SIZE") return std::string("4k");
    return std::nullopt;
  };
  // Includes resolve to a fixed small file, so include loops stay bounded.
  env.read_file = [](const std::string&) -> arcstore::Result<std::string> {
    return std::string("bs=4k\n");
  };
  auto set = ParseJobText(text, "fuzz.fio", ".", env);
  if (set.ok()) {
    for (const Job& j : set->jobs) (void)j.Validate();
  }
  (void)ParseFioSizeOrPercent(text, 1024);
  (void)ParseFioTimeNs(text, TimeUnit::kSec);
  (void)ParseBsSplitList(text, 1000);
  (void)ParsePercentileList(text);
  return 0;
}
