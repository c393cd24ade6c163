// ByteSource: a trace file's bytes, decompressed on the fly.
//
// OpenByteSource() looks at the file's first bytes: zstd frames (the ARC
// paper's .lis.zst) are streamed through libzstd, gzip (the LIRS traces)
// through zlib, anything else is read as is. xz and bzip2 are recognised and
// refused with a hint. Memory use is a few hundred KiB whatever the size.
//
// Thread-safety: none. The source owns its file handle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/result.h"

namespace arcstore::sim {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `n` decompressed bytes into `buf`; 0 only at the end.
  virtual Result<size_t> Read(char* buf, size_t n) = 0;
  // How far into the (compressed) file we are, for progress reports.
  virtual uint64_t file_offset() const = 0;
  // "zstd", "gzip" or "plain".
  virtual const char* encoding() const = 0;
};

// Opens `path`; `*file_bytes` receives the file's size.
Result<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path, uint64_t* file_bytes);

}  // namespace arcstore::sim
