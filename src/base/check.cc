#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace arcstore::internal {

CheckFailure::CheckFailure(const char* file, int line, const std::string& what) {
  stream_ << file << ":" << line << ": " << what << " ";
}

CheckFailure::~CheckFailure() {
  std::string msg = stream_.str();
  std::fprintf(stderr, "%s\n", msg.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace arcstore::internal
