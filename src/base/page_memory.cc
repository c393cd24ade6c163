#include "base/page_memory.h"

#include <sys/mman.h>

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

uint8_t* MapPopulatedPages(uint64_t bytes) {
  uint8_t* p = MapPages(bytes);
  (void)madvise(p, PageRound(bytes), MADV_NOHUGEPAGE);
  (void)madvise(p, PageRound(bytes), MADV_POPULATE_WRITE);
  return p;
}

}  // namespace arcstore
