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
