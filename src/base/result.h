// Result<T> (include/arcstore/result.h) and the macros that propagate
// errors inside the engine:
//
//   ARC_RETURN_IF_ERROR(expr);                  // expr is a Status
//   ARC_ASSIGN_OR_RETURN(uint64_t bytes, ParseSizeBytes("128K"));
//
// Both return the error from the enclosing function, which returns Status
// or Result<U>.
#pragma once

#include "arcstore/result.h"
#include "base/check.h"
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
