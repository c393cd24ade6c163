// Result<T>: either a value of type T or a non-OK Status.
//
// Usage:
//   Result<uint64_t> r = ParseSizeBytes("128K");
//   if (!r.ok()) return r.status();
//   uint64_t bytes = *r;
// Taking the value of an error aborts with the status printed.
//
// Thread-safety: a value type; no internal synchronisation.
#pragma once

#include <optional>
#include <utility>

#include "arcstore/status.h"

namespace arcstore {

namespace internal {
// Abort with the status printed: taking the value of an error is a bug.
[[noreturn]] void ValueOfError(const Status& status);
[[noreturn]] void ResultFromOkStatus();
}  // namespace internal

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) internal::ResultFromOkStatus();
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & {
    if (!ok()) internal::ValueOfError(status_);
    return *value_;
  }
  const T& value() const& {
    if (!ok()) internal::ValueOfError(status_);
    return *value_;
  }
  T&& value() && {
    if (!ok()) internal::ValueOfError(status_);
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T value_or(T fallback) const& { return ok() ? *value_ : std::move(fallback); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace arcstore
