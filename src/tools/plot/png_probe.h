// PngProbe (tests only): decodes an 8-bit RGB/RGBA, non-interlaced PNG (what
// gnuplot's pngcairo terminal writes) far enough to say whether anything was
// drawn: how many pixels differ from the background and how many colours
// appear. Not a general PNG reader.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace arcstore::tools {

struct PngFacts {
  uint32_t width = 0, height = 0;
  uint64_t non_background_pixels = 0;  // pixels unlike the top-left one
  uint32_t colours = 0;                // distinct colours, counted up to 4096
};

Result<PngFacts> ProbePng(const std::string& path);

}  // namespace arcstore::tools
