// Shared body of the format's fuzz targets: each target decodes hostile
// bytes with one decoder and, when decoding succeeds, checks that encoding
// the result gives back the same bytes (so decode accepts only what encode
// would write). Thread-safety: not applicable (single-threaded fuzzing).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

namespace arcstore::format::fuzz {

inline void Require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz invariant failed: %s\n", what);
    std::abort();
  }
}

}  // namespace arcstore::format::fuzz
