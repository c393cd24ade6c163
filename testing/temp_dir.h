// TempDir: a fresh, empty directory for one test, removed with everything in
// it when the TempDir is destroyed.
//
//   testing::TempDir dir("arcstore_listen");  // /tmp/arcstore_listen.Xk3q9a
//   std::ofstream(dir.File("keys.psk")) << ...;
//
// The directory is made under $TMPDIR, or /tmp when that is unset or empty,
// named `prefix` followed by "." and six random characters (mkdtemp), mode
// 0700. path() is absolute with symbolic links resolved, so tests that
// compare or refuse unresolved paths can use it as it is. A directory that
// cannot be made aborts the test binary with the reason (a test with nowhere
// to write cannot run); removal ignores errors.
//
// Something that must be gone before its files are (a server listening on a
// socket in the directory) is declared after the TempDir, or reset
// explicitly, so that it is destroyed first.
//
// Thread-safety: path() and File() may be called from any thread; the
// TempDir itself belongs to one test and is neither copied nor moved.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/check.h"

namespace arcstore::testing {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "arcstore") {
    const char* env = std::getenv("TMPDIR");
    std::string parent = (env != nullptr && env[0] != '\0') ? env : "/tmp";
    while (parent.size() > 1 && parent.back() == '/') parent.pop_back();
    std::string tmpl = parent + "/" + std::string(prefix) + ".XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const bool made = ::mkdtemp(buf.data()) != nullptr;
    const int mkdtemp_errno = errno;
    ARC_CHECK(made) << "mkdtemp " << tmpl << ": " << std::strerror(mkdtemp_errno);
    std::error_code ec;
    path_ = std::filesystem::canonical(buf.data(), ec).string();
    ARC_CHECK(!ec) << "resolving " << buf.data() << ": " << ec.message();
  }

  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // path() + "/" + name; the file is not created.
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

}  // namespace arcstore::testing
