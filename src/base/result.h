// Result<T>: either a value of type T or a non-OK Status.
//
// Usage:
//   Result<uint64_t> r = ParseSize("128K");
//   if (!r.ok()) return r.status();
//   uint64_t bytes = *r;
// or, inside a function returning Status or Result<U>:
//   ARC_ASSIGN_OR_RETURN(uint64_t bytes, ParseSize("128K"));
//
// Thread-safety: a value type; no internal synchronisation.
#pragma once

#include <optional>
#include <type_traits>
#include <utility>

#include "arcstore/status.h"
#include "base/check.h"

namespace arcstore {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    ARC_CHECK(!status_.ok()) << "Result built from an OK status without a value";
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & {
    ARC_CHECK(ok()) << status_.ToString();
    return *value_;
  }
  const T& value() const& {
    ARC_CHECK(ok()) << status_.ToString();
    return *value_;
  }
  T&& value() && {
    ARC_CHECK(ok()) << status_.ToString();
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

#define ARC_CONCAT_INNER_(a, b) a##b
#define ARC_CONCAT_(a, b) ARC_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function when `expr` is not OK.
#define ARC_RETURN_IF_ERROR(expr)                      \
  do {                                                 \
    ::arcstore::Status arc_status_ = (expr);           \
    if (!arc_status_.ok()) return arc_status_;         \
  } while (0)

#define ARC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(*tmp)

// Declares or assigns `lhs` from a Result, returning its status on failure.
#define ARC_ASSIGN_OR_RETURN(lhs, expr) \
  ARC_ASSIGN_OR_RETURN_IMPL_(ARC_CONCAT_(arc_result_, __LINE__), lhs, expr)
