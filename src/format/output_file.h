// Output files: the one rule for every file arcstore writes on request (a
// trace, plots, bench reports, sim curves), so that no output ever lands on
// a pool, a device or someone else's file.
//
//   client (the command line)            server or writer
//   ResolveOutputPath(path)      --->    CreateOutputFile(resolved, options)
//     absolute, its directory              refuses a path that is not already
//     resolved (symlinks, . and ..)        resolved; creates with O_EXCL and
//     and required to exist                O_NOFOLLOW; an existing file only
//                                          with replace_existing, and then only
//                                          a regular file that no one holds
//                                          locked (every open pool does) and
//                                          that carries no signature (an
//                                          arcstore label, a filesystem, a
//                                          partition table: signature.h)
//
// A replaced file is truncated only after those checks, and its descriptor
// keeps an exclusive flock, so that no pool opens it while it is written.
// Devices, FIFOs, sockets, directories and symbolic links are never
// written, whatever replace_existing says.
//
// This lives in format/ because it must recognise a pool's label.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace arcstore::format {

// The absolute form of `path` with its directory resolved; the last
// component stays as given. InvalidArgument naming the path when the
// directory does not exist or is not a directory, or the name is empty,
// "." or "..".
Result<std::string> ResolveOutputPath(const std::string& path);

struct OutputFileOptions {
  // Replace an existing regular file (a command's --force).
  bool replace_existing = false;
  uint32_t mode = 0644;

  Status Validate() const;  // mode within 0777
};

// Creates `path` (already resolved: ResolveOutputPath(path) == path) for
// writing and returns its descriptor (O_CLOEXEC; the caller closes it).
// AlreadyExists when it exists and !replace_existing; Busy when it is
// locked by an open pool or another program; InvalidArgument when it is not
// a regular file or carries a signature, or the path is not resolved.
Result<int> CreateOutputFile(const std::string& path, const OutputFileOptions& options);

// ResolveOutputPath then CreateOutputFile, closing the descriptor: for a
// file another program (gnuplot) fills, reserved here under the same rule.
// Returns the resolved path.
Result<std::string> ReserveOutputFile(const std::string& path, const OutputFileOptions& options);

}  // namespace arcstore::format
