// PskFile: the pre-shared keys of a psktool-format file.
//
//   # comments and blank lines are ignored
//   alice:0123456789abcdef0123456789abcdef
//
// One "username:hexkey" a line (what `psktool -u NAME -p FILE` writes).
// The username is the connection's identity. Errors name file:line and why.
//
// Thread-safety: immutable once parsed; any thread may look keys up.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"

namespace arcstore::nbd {

class PskFile {
 public:
  // Parses `text`; `origin` (a path) prefixes error messages.
  static Result<PskFile> Parse(const std::string& text, const std::string& origin);
  static Result<PskFile> Load(const std::string& path);

  // The key of `username`, or nullptr.
  const std::vector<uint8_t>* Find(const std::string& username) const;
  size_t size() const { return keys_.size(); }

 private:
  std::map<std::string, std::vector<uint8_t>> keys_;
};

// Reads a whole small text file (at most `max_bytes`); errors name the path.
Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes);

}  // namespace arcstore::nbd
