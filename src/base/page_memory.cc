#include "base/page_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/check.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels say EINVAL
#endif

namespace arcstore {

uint8_t* MapPages(uint64_t bytes) {
  void* p = mmap(nullptr, PageRound(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ARC_CHECK(p != MAP_FAILED) << "mapping " << bytes << " bytes: " << std::strerror(errno);
  return static_cast<uint8_t*>(p);
}

void UnmapPages(uint8_t* data, uint64_t bytes) {
  ARC_CHECK(munmap(data, PageRound(bytes)) == 0)
      << "unmapping " << bytes << " bytes: " << std::strerror(errno);
}

void PopulatePages(uint8_t* p, uint64_t bytes) {
  (void)madvise(p, PageRound(bytes), MADV_POPULATE_WRITE);
}

uint8_t* MapWarmPages(uint64_t bytes) {
  const uint64_t rounded = PageRound(bytes);
  uint8_t* p = nullptr;
  if (rounded < kHugePageBytes) {
    p = MapPages(rounded);
  } else {
    // Over-map by a huge page less a page, then give back the head and
    // tail around the aligned span.
    const uint64_t over = rounded + kHugePageBytes - kPageBytes;
    uint8_t* raw = MapPages(over);
    const uint64_t head =
        (kHugePageBytes - reinterpret_cast<uintptr_t>(raw) % kHugePageBytes) % kHugePageBytes;
    p = raw + head;
    if (head != 0) UnmapPages(raw, head);
    if (over - head > rounded) UnmapPages(p + rounded, over - head - rounded);
    // Advice is a hint: a kernel without transparent huge pages (or with
    // them off) populates small pages, which TouchPages then warms.
    (void)madvise(p, rounded / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
  }
  PopulatePages(p, rounded);
  (void)madvise(p, rounded, MADV_NOHUGEPAGE);
  TouchPages(p, rounded);
  return p;
}

void TouchPages(uint8_t* p, uint64_t bytes) {
  for (uint64_t at = 0; at < bytes; at += kPageBytes) {
    reinterpret_cast<volatile uint8_t*>(p)[at] = 0;
  }
  const int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  constexpr uint64_t kStepBytes = 1 << 20;
  for (uint64_t at = 0; at < bytes;) {
    const ssize_t n = read(fd, p + at, std::min(kStepBytes, bytes - at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += static_cast<uint64_t>(n);
  }
  close(fd);
}

}  // namespace arcstore
