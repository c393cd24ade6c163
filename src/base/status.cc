#include "arcstore/status.h"

#include <cstdio>
#include <cstdlib>

#include "arcstore/result.h"

namespace arcstore {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "Invalid argument";
    case StatusCode::kNotFound: return "Not found";
    case StatusCode::kAlreadyExists: return "Already exists";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kIOError: return "I/O error";
    case StatusCode::kNoSpace: return "No space";
    case StatusCode::kBusy: return "Busy";
    case StatusCode::kNotSupported: return "Not supported";
    case StatusCode::kAborted: return "Aborted";
    case StatusCode::kOutOfRange: return "Out of range";
    case StatusCode::kResourceExhausted: return "Resource exhausted";
    case StatusCode::kInternal: return "Internal error";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s(StatusCodeName(code_));
  if (!message_.empty()) {
    s += ": ";
    s += message_;
  }
  return s;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string m(context);
  if (!message_.empty()) {
    m += ": ";
    m += message_;
  }
  return Status(code_, std::move(m));
}

namespace internal {

void ValueOfError(const Status& status) {
  std::fprintf(stderr, "value of an error Result taken: %s\n", status.ToString().c_str());
  std::abort();
}

void ResultFromOkStatus() {
  std::fprintf(stderr, "Result built from an OK status without a value\n");
  std::abort();
}

}  // namespace internal

}  // namespace arcstore
