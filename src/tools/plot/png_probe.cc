#include "tools/plot/png_probe.h"

#include <zlib.h>

#include <cstdlib>
#include <set>
#include <vector>

#include "tools/plot/trace_file.h"

namespace arcstore::tools {

namespace {

uint32_t Be32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) | (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) | uint32_t{static_cast<uint8_t>(s[at + 3])};
}

uint8_t Paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

}  // namespace

Result<PngFacts> ProbePng(const std::string& path) {
  ARC_ASSIGN_OR_RETURN(std::string png, ReadWholeFile(path, 64 << 20));
  if (png.size() < 33 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
    return Status::InvalidArgument(path + ": not a PNG");
  }
  PngFacts f;
  int bpp = 0;
  std::string idat;
  for (size_t at = 8; at + 12 <= png.size();) {
    uint32_t len = Be32(png, at);
    std::string type = png.substr(at + 4, 4);
    if (at + 12 + len > png.size()) return Status::InvalidArgument(path + ": truncated chunk " + type);
    if (type == "IHDR") {
      f.width = Be32(png, at + 8);
      f.height = Be32(png, at + 12);
      int depth = static_cast<uint8_t>(png[at + 16]), colour = static_cast<uint8_t>(png[at + 17]);
      int interlace = static_cast<uint8_t>(png[at + 20]);
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) {
        return Status::NotSupported(path + ": only 8-bit RGB/RGBA non-interlaced PNGs");
      }
      bpp = colour == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, len);
    }
    at += 12 + len;
  }
  if (bpp == 0 || f.width == 0 || f.height == 0 || f.width > 20000 || f.height > 20000) {
    return Status::InvalidArgument(path + ": no usable IHDR");
  }
  size_t stride = size_t{f.width} * static_cast<size_t>(bpp);
  std::vector<uint8_t> raw((stride + 1) * f.height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_len != raw.size()) {
    return Status::InvalidArgument(path + ": image data does not inflate to its size");
  }
  std::vector<uint8_t> img(stride * f.height), zero(stride, 0);
  for (uint32_t y = 0; y < f.height; y++) {
    const uint8_t* in = &raw[y * (stride + 1)];
    uint8_t* out = &img[y * stride];
    const uint8_t* up = y == 0 ? zero.data() : &img[(y - 1) * stride];
    for (size_t x = 0; x < stride; x++) {
      int a = x >= static_cast<size_t>(bpp) ? out[x - bpp] : 0;
      int b = up[x];
      int c = x >= static_cast<size_t>(bpp) ? up[x - bpp] : 0;
      int v = in[1 + x];
      switch (in[0]) {
        case 0: break;
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) / 2; break;
        case 4: v += Paeth(a, b, c); break;
        default: return Status::InvalidArgument(path + ": bad filter type");
      }
      out[x] = static_cast<uint8_t>(v);
    }
  }
  std::set<uint32_t> colours;
  auto pixel = [&](size_t i) {
    const uint8_t* p = &img[i * static_cast<size_t>(bpp)];
    return (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
  };
  uint32_t background = pixel(0);
  for (size_t i = 0; i < size_t{f.width} * f.height; i++) {
    uint32_t px = pixel(i);
    if (px != background) f.non_background_pixels++;
    if (colours.size() < 4096) colours.insert(px);
  }
  f.colours = static_cast<uint32_t>(colours.size());
  return f;
}

}  // namespace arcstore::tools
