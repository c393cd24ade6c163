// Checksums: xxHash3, 64- and 128-bit (libxxhash).
//
// Block pointers carry the 128-bit form; in-memory structures and log records
// may use the 64-bit one. Both are seedless so that a checksum computed today
// verifies in any later version of the format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace arcstore {

struct Checksum128 {
  uint64_t lo = 0;
  uint64_t hi = 0;
  friend bool operator==(const Checksum128&, const Checksum128&) = default;
  std::string ToHex() const;
};

uint64_t Xxh3_64(const void* data, size_t len);
Checksum128 Xxh3_128(const void* data, size_t len);

// Streaming 128-bit checksum over several pieces (vectored buffers).
class Xxh3_128Stream {
 public:
  Xxh3_128Stream();
  ~Xxh3_128Stream();
  Xxh3_128Stream(const Xxh3_128Stream&) = delete;
  Xxh3_128Stream& operator=(const Xxh3_128Stream&) = delete;
  void Update(const void* data, size_t len);
  Checksum128 Digest() const;

 private:
  void* state_;
};

}  // namespace arcstore
