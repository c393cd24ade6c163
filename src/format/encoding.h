// Little-endian field access and the format's constants.
//
// Every on-disk structure is encoded field by field at explicit offsets with
// these helpers (never by copying a C++ struct), so the bytes on disk are
// the same on any host. Offsets of each structure are in docs/format.md.
//
// Thread-safety: stateless functions and constants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "arcstore/status.h"
#include "base/checksum.h"

namespace arcstore::format {

// The on-disk format version this build writes and the only one it reads.
inline constexpr uint32_t kFormatVersion = 2;

// An 8-character magic as the u64 whose little-endian bytes spell it, so
// that a hex dump of the device shows the text.
constexpr uint64_t Magic(const char (&text)[9]) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(text[i]);
  return v;
}

inline constexpr uint64_t kLabelMagic = Magic("ARCLABEL");
inline constexpr uint64_t kUberblockMagic = Magic("ARCUBERB");
inline constexpr uint64_t kIndirectMagic = Magic("ARCINDIR");
inline constexpr uint64_t kVolumeTableMagic = Magic("ARCVOLTB");
inline constexpr uint64_t kSpaceLogMagic = Magic("ARCSPLOG");

inline void StoreLe16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline void StoreLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void StoreLe64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint16_t LoadLe16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t LoadLe32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline void StoreChecksum(uint8_t* p, const Checksum128& c) {
  StoreLe64(p, c.lo);
  StoreLe64(p + 8, c.hi);
}
inline Checksum128 LoadChecksum(const uint8_t* p) { return {LoadLe64(p), LoadLe64(p + 8)}; }

// True when every byte of [p, p + n) is zero.
bool AllZero(const uint8_t* p, size_t n);

// Corruption errors in one shape: "<what>: <detail>".
Status CorruptionAt(std::string_view what, std::string_view detail);
// "<what>: format version V is not supported (this build reads version
// kFormatVersion)".
Status VersionMismatch(std::string_view what, uint32_t found);
// "<what>: N bytes, expected M" / "at least M" / "at most M".
Status BadLength(std::string_view what, size_t got, std::string_view relation, size_t want);
// Checks magic and version at offsets 0 and 8 of a structure.
Status CheckMagicAndVersion(std::string_view what, const uint8_t* p, uint64_t magic);
std::string Hex64(uint64_t v);

}  // namespace arcstore::format
