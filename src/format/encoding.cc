// The on-disk format. Theory of operation (docs/format.md is the reference):
//
// Purpose: turn the engine's roots, trees and space records into bytes at
// explicit little-endian offsets and back, refusing anything damaged.
//
//   label header (front+back) --config, geometry
//   uberblock ring (128 slots x A, both labels)
//      uberblock(txg) --root-->      volume table --root per volume--> indirect L(d)
//                                                     ... --> indirect L1 --> data records
//                     --space log--> space log block k --prev--> ... block 0
//                     --intent log-> (reserved)
//
// Every arrow is a 64-byte block pointer carrying the xxh3-128 checksum of
// the block it names, so verifying from the uberblock down verifies all;
// pointers and label/uberblock carry their own checksums.
// Invariants: decoders check length (exact where the structure has one),
// magic, version, checksum, then each field's bounds and cross-field rules,
// and return Corruption "<structure>: <what> at byte N"; an encoder refuses
// a structure its decoder would refuse (so decode(encode(x)) == x, which the
// fuzz targets check).
// Locking: none (values and pure functions).
// Limits: docs/format.md, "Limits". Tunables: none; the format is fixed by
// kFormatVersion. Stats: none.
#include "format/encoding.h"

#include <cstdio>

namespace arcstore::format {

bool AllZero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

std::string Hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

Status CorruptionAt(std::string_view what, std::string_view detail) {
  return Status::Corruption(std::string(what) + ": " + std::string(detail));
}

Status VersionMismatch(std::string_view what, uint32_t found) {
  return CorruptionAt(what, "format version " + std::to_string(found) +
                                " is not supported (this build reads version " +
                                std::to_string(kFormatVersion) + ")");
}

Status BadLength(std::string_view what, size_t got, std::string_view relation, size_t want) {
  return CorruptionAt(what, std::to_string(got) + " bytes, expected " + std::string(relation) +
                                std::to_string(want));
}

Status CheckMagicAndVersion(std::string_view what, const uint8_t* p, uint64_t magic) {
  uint64_t found = LoadLe64(p);
  if (found != magic) {
    return CorruptionAt(what, "bad magic " + Hex64(found) + " at byte 0, expected " + Hex64(magic));
  }
  uint32_t version = LoadLe32(p + 8);
  if (version != kFormatVersion) return VersionMismatch(what, version);
  return Status::Ok();
}

}  // namespace arcstore::format
