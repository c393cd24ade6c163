#include "base/checksum.h"

// On x86-64, libxxhash's dispatching entry points pick the widest vector
// unit the CPU has (AVX2 or AVX-512) at the first call; the plain ones are
// built for the baseline (SSE2). The header maps XXH3_* to them. The hash
// is the same on every path; only the speed differs, several times over
// for 128-bit XXH3 of a record (format_bench: BM_Checksum128 against
// BM_Checksum128Baseline), and the txg sync checksums every block written.
#if defined(__x86_64__)
#include <xxh_x86dispatch.h>
#else
#include <xxhash.h>
#endif

#include <cstdio>

#include "base/check.h"

namespace arcstore {

std::string Checksum128::ToHex() const {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

uint64_t Xxh3_64(const void* data, size_t len) { return XXH3_64bits(data, len); }

Checksum128 Xxh3_128(const void* data, size_t len) {
  XXH128_hash_t h = XXH3_128bits(data, len);
  return Checksum128{h.low64, h.high64};
}

Xxh3_128Stream::Xxh3_128Stream() : state_(XXH3_createState()) {
  ARC_CHECK(state_ != nullptr) << "out of memory for checksum state";
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}

Xxh3_128Stream::~Xxh3_128Stream() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void Xxh3_128Stream::Update(const void* data, size_t len) {
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), data, len);
}

Checksum128 Xxh3_128Stream::Digest() const {
  XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  return Checksum128{h.low64, h.high64};
}

}  // namespace arcstore
