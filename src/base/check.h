// Checks: assertions in two tiers.
//
//   ARC_CHECK(cond) << "context";     always on: on-disk invariants, arguments
//   ARC_CHECK_EQ(a, b), _NE _LT _LE _GT _GE   always on, print both operands
//   ARC_DCHECK(...), ARC_DCHECK_EQ(...) ...   debug builds only (NDEBUG off)
//
// A failed check prints "file:line: check failed: a == b (3 vs 4) context" to
// stderr and aborts. Checks are for bugs; bad input from outside is a Status.
#pragma once

#include <sstream>
#include <string>

namespace arcstore::internal {

// Collects the message of a failed check; aborts when destroyed.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const std::string& what);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `ARC_CHECK(x) << ...` compile to nothing when the check passes.
struct Voidify {
  void operator&(std::ostream&) {}
};

template <typename A, typename B>
std::string FormatOperands(const A& a, const B& b) {
  std::ostringstream s;
  s << " (" << a << " vs " << b << ")";
  return s.str();
}

}  // namespace arcstore::internal

#define ARC_CHECK(cond)                                   \
  (cond) ? (void)0                                        \
         : ::arcstore::internal::Voidify() &              \
               ::arcstore::internal::CheckFailure(__FILE__, __LINE__, "check failed: " #cond).stream()

#define ARC_CHECK_OP_(a, b, op)                                                             \
  ((a)op(b)) ? (void)0                                                                      \
             : ::arcstore::internal::Voidify() &                                            \
                   ::arcstore::internal::CheckFailure(                                      \
                       __FILE__, __LINE__,                                                  \
                       "check failed: " #a " " #op " " #b +                                 \
                           ::arcstore::internal::FormatOperands((a), (b)))                  \
                       .stream()

#define ARC_CHECK_EQ(a, b) ARC_CHECK_OP_(a, b, ==)
#define ARC_CHECK_NE(a, b) ARC_CHECK_OP_(a, b, !=)
#define ARC_CHECK_LT(a, b) ARC_CHECK_OP_(a, b, <)
#define ARC_CHECK_LE(a, b) ARC_CHECK_OP_(a, b, <=)
#define ARC_CHECK_GT(a, b) ARC_CHECK_OP_(a, b, >)
#define ARC_CHECK_GE(a, b) ARC_CHECK_OP_(a, b, >=)

#ifdef NDEBUG
#define ARC_DCHECK_ENABLED_ false
#else
#define ARC_DCHECK_ENABLED_ true
#endif

// Debug-only: the condition is not evaluated in release builds.
#define ARC_DCHECK(cond) ARC_CHECK(!ARC_DCHECK_ENABLED_ || (cond))
#define ARC_DCHECK_OP_(a, b, op) \
  if (ARC_DCHECK_ENABLED_) ARC_CHECK_OP_(a, b, op)
#define ARC_DCHECK_EQ(a, b) ARC_DCHECK_OP_(a, b, ==)
#define ARC_DCHECK_NE(a, b) ARC_DCHECK_OP_(a, b, !=)
#define ARC_DCHECK_LT(a, b) ARC_DCHECK_OP_(a, b, <)
#define ARC_DCHECK_LE(a, b) ARC_DCHECK_OP_(a, b, <=)
#define ARC_DCHECK_GT(a, b) ARC_DCHECK_OP_(a, b, >)
#define ARC_DCHECK_GE(a, b) ARC_DCHECK_OP_(a, b, >=)
