// The test process's own memory, from /proc/self/status: the resident set
// now (VmRSS) and its peak over the process's life (VmHWM), in bytes; 0 when
// the file cannot be read. For tests that bound memory (memory caps, NBD
// limits). Thread-safety: any thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

namespace arcstore::testing {

inline uint64_t ProcStatusBytes(const char* key) {
  std::ifstream in("/proc/self/status");
  const size_t n = std::strlen(key);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, n, key) == 0 && line.size() > n && line[n] == ':') {
      return std::stoull(line.substr(n + 1)) * 1024;  // "VmRSS:   1234 kB"
    }
  }
  return 0;
}

inline uint64_t ResidentBytes() { return ProcStatusBytes("VmRSS"); }
inline uint64_t PeakResidentBytes() { return ProcStatusBytes("VmHWM"); }

}  // namespace arcstore::testing
