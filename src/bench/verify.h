// Verification patterns for verify=crc32c|md5.
//
// Every written block carries a 32-byte header and a pseudo-random payload:
//
//   0        8          16              32                          bs
//   | offset | sequence | checksum (16) | payload = f(offset, sequence) |
//
// The checksum (CRC-32C, or MD5) covers the offset, the sequence and the
// payload. A block read back is good when its checksum matches and its
// offset field names the offset it was read from: a corrupted, torn or
// misplaced block is detected and reported with its offset. (fio's own
// verify header layout is not reproduced.)
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/result.h"
#include "bench/job.h"

namespace arcstore::bench {

inline constexpr size_t kVerifyHeaderBytes = 32;

uint32_t Crc32c(uint32_t crc, const void* data, size_t len);
// MD5 (RFC 1321) of `data`, 16 bytes into `out`.
void Md5(const void* data, size_t len, uint8_t out[16]);

// Fills `block` (at least kVerifyHeaderBytes) for `offset` and `sequence`.
void FillVerifyBlock(VerifyKind kind, uint64_t offset, uint64_t sequence, std::span<uint8_t> block);
// OK, or Corruption naming `offset` and what did not match.
Status CheckVerifyBlock(VerifyKind kind, uint64_t offset, std::span<const uint8_t> block);

}  // namespace arcstore::bench
