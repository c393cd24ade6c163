// Status: the result of an operation that can fail, carried as a value.
//
// arcstore never throws across its API. Every fallible call returns a Status
// (or a Result<T>, see src/base/result.h), and the message names what failed
// and where ("volume vol0 offset 4096: checksum mismatch in block 12").
//
// Thread-safety: a Status is a value; copies are independent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace arcstore {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,  // the caller passed something malformed or out of range
  kNotFound,
  kAlreadyExists,
  kCorruption,       // on-disk or on-wire data failed verification
  kIOError,          // the device reported an error
  kNoSpace,          // the pool (or a limit) is full
  kBusy,             // a resource is held; try again later
  kNotSupported,
  kAborted,          // cancelled by shutdown or by the caller
  kOutOfRange,       // an offset or length past the end
  kResourceExhausted,// a configured limit was reached
  kInternal,         // a bug: an invariant did not hold
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kIOError, std::move(m)}; }
  static Status NoSpace(std::string m) { return {StatusCode::kNoSpace, std::move(m)}; }
  static Status Busy(std::string m) { return {StatusCode::kBusy, std::move(m)}; }
  static Status NotSupported(std::string m) { return {StatusCode::kNotSupported, std::move(m)}; }
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "Corruption: volume vol0 offset 4096: ..." or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "context: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

  // Explicitly discards a status where failure is acceptable; says so in code.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace arcstore
