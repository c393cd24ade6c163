// Page mappings for large buffers that must leave the process's resident
// set when they are freed.
//
// glibc serves a large block by mmap only until the first one is freed; it
// then raises its mmap threshold and serves such blocks from its per-thread
// arenas, where freed blocks stay resident. An engine that allocates and
// frees 128 KiB records all day (ARC buffers, sync-write and read buffers)
// then keeps far more resident than it uses. Buffers of at least
// kMapMinBytes are therefore mapped here (anonymous, private) and unmapped
// when freed.
//
// Thread-safety: free functions, callable from any thread. The caller owns
// a mapping until it unmaps it with the same size.
#pragma once

#include <cstdint>

namespace arcstore {

inline constexpr uint64_t kPageBytes = 4096;
// Buffers this large or larger are worth a mapping of their own.
inline constexpr uint64_t kMapMinBytes = 64 * 1024;

inline uint64_t PageRound(uint64_t bytes) { return (bytes + kPageBytes - 1) & ~(kPageBytes - 1); }

// Zero-filled, page-aligned memory of PageRound(bytes). Aborts, naming the
// size and errno, when the system has none left (as new[] would throw).
uint8_t* MapPages(uint64_t bytes);
void UnmapPages(uint8_t* data, uint64_t bytes);

}  // namespace arcstore
