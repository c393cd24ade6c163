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
// Warm pages. On a virtual machine whose hypervisor builds the page tables
// it walks itself on demand (one set for the guest's user mode, one for its
// kernel), the first touch of a 4 KiB page costs a trip to the hypervisor
// from each mode, dozens of times a copy into the page: a buffer written by
// a recv and then checksummed pays twice per page. A page that is part of a
// 2 MiB huge page is one entry in those tables: populating the huge page
// costs about half of what its 512 small pages cost touched in both modes,
// and after it neither mode pays anything. MapWarmPages maps memory that
// way, ready for use:
//
//   mmap(bytes + 2 MiB) --trim--> 2 MiB-aligned span
//     MADV_HUGEPAGE, MADV_POPULATE_WRITE      huge pages where the kernel has them
//     MADV_NOHUGEPAGE                         the pages stay huge, but a range
//                                             given back later (munmap,
//                                             MADV_DONTNEED) is never made
//                                             resident again by khugepaged
//     TouchPages                              each page written once from user
//                                             space and once by the kernel: a
//                                             no-op on huge pages, the whole
//                                             cost where the kernel had none
//
// Giving back part of a warm mapping splits only the huge page it lies in;
// the rest stay huge.
//
// Thread-safety: free functions, callable from any thread. The caller owns
// a mapping until it unmaps it with the same size.
#pragma once

#include <cstdint>

namespace arcstore {

inline constexpr uint64_t kPageBytes = 4096;
// Buffers this large or larger are worth a mapping of their own.
inline constexpr uint64_t kMapMinBytes = 64 * 1024;
// The huge page size warm mappings are aligned to (x86-64's PMD size).
inline constexpr uint64_t kHugePageBytes = 2ull << 20;

inline uint64_t PageRound(uint64_t bytes) { return (bytes + kPageBytes - 1) & ~(kPageBytes - 1); }

// Zero-filled, page-aligned memory of PageRound(bytes). Aborts, naming the
// size and errno, when the system has none left (as new[] would throw).
uint8_t* MapPages(uint64_t bytes);
void UnmapPages(uint8_t* data, uint64_t bytes);
// Makes every page of [p, p + PageRound(bytes)) resident with one system
// call (MADV_POPULATE_WRITE) instead of a fault per page at first touch; a
// hint: a kernel without it (before Linux 5.14) faults them in on use.
void PopulatePages(uint8_t* p, uint64_t bytes);
// Zero-filled memory of PageRound(bytes), 2 MiB-aligned when at least
// 2 MiB, populated and touched in both modes (see "Warm pages"). Costs
// the caller the whole first-touch price at once: call it off latency-
// sensitive paths. Unmap with UnmapPages (whole or in page-aligned parts).
uint8_t* MapWarmPages(uint64_t bytes);
// Writes each page of [p, p + bytes) once from user space (a zero into a
// zero-filled page) and once by the kernel on the process's behalf (a read
// from /dev/zero). Only for memory that holds zeros.
void TouchPages(uint8_t* p, uint64_t bytes);

}  // namespace arcstore
