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
// Memory new to the process. On a virtual machine whose balloon device
// reports free memory to the hypervisor (virtio-balloon free page
// reporting), the guest kernel hands back free blocks of 2 MiB and larger
// a few seconds after they are freed, and the hypervisor drops them; the
// next write to each 4 KiB page of such a block is a trip to the
// hypervisor to back it again. Free fragments smaller than 2 MiB are
// never reported and stay backed. Measured on this project's machines
// (populating 1 GiB at a time, MADV_POPULATE_WRITE): 0.3 s a GiB while
// the kernel hands out fragments, 2.0-2.6 s a GiB once it splits reported
// blocks; a huge page can only be made of a whole 2 MiB block, so 1 GiB of
// huge pages costs 2.3 s even while fragments are there. Once populated,
// a page costs nothing more to its first access from user space or by the
// kernel on the process's behalf (a recv into it).
//
// So memory that must be ready for use (MapPopulatedPages) is mapped in
// small pages and populated with one system call:
//
//   mmap(bytes)
//     MADV_NOHUGEPAGE        small pages, taken from fragments first; and a
//                            range given back later (munmap, MADV_DONTNEED)
//                            is never made resident again by khugepaged
//     MADV_POPULATE_WRITE    every page resident and zeroed: one system
//                            call, not a fault per page at first touch
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
// Zero-filled, page-aligned memory of PageRound(bytes) in small pages,
// every page resident (see "Memory new to the process"). Costs the caller
// the whole first-touch price at once: call it off latency-sensitive
// paths. Population is a hint: a kernel without MADV_POPULATE_WRITE
// (before Linux 5.14) faults the pages in on first touch instead. Unmap
// with UnmapPages (whole or in page-aligned parts).
uint8_t* MapPopulatedPages(uint64_t bytes);

}  // namespace arcstore
