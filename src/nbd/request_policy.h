// RequestPolicy: one connection's rules for where its requests run and
// when its held replies go (server.cc, "Requests run inline", has the
// why). The connection asks; the policy decides from what it is told. It
// does no I/O, so every rule is tested on its own (request_policy_test.cc).
//
//   inline (on the reader thread) or submitted:
//     alone   nothing else in flight and nothing buffered past the
//             request's payload: a short data command or a FLUSH runs
//             inline whatever it may wait for (a client at queue depth 1),
//             but a FLUSH or a FUA request whose log commit the volume says
//             would wait for a txg sync
//     hinted  otherwise a short data command, or a READ or WRITE of up
//             to kInlineMaxHintedBytes, without FUA runs inline when the
//             volume says it will not wait (Volume::MayWait)
//   replies held back by inline requests are sent at least every
//   kMaxInlineBurst inline requests, and at once after an inline request
//   longer than kInlineMaxBytes (its client waits for that reply to send
//   its next long request; the reply is small beside the request)
//
// Thread-safety: the reader thread only.
#pragma once

#include <cstdint>

namespace arcstore::nbd {

class RequestPolicy {
 public:
  static constexpr uint32_t kInlineMaxBytes = 64 * 1024;  // longer: never inline
  // but READs the volume will serve from memory and WRITEs it will take
  // without waiting, up to this length.
  static constexpr uint32_t kInlineMaxHintedBytes = 1024 * 1024;
  static constexpr uint32_t kMaxInlineBurst = 16;

  struct Options {
    bool inline_idle_requests = true;              // the "alone" rule
    bool inline_requests_that_do_not_wait = true;  // the "hinted" rule
  };

  explicit RequestPolicy(const Options& options) : options_(options) {}
  RequestPolicy(const RequestPolicy&) = delete;
  RequestPolicy& operator=(const RequestPolicy&) = delete;

  // A READ, WRITE, TRIM or WRITE_ZEROES of at most kInlineMaxBytes.
  static bool ShortDataCommand(uint16_t command, uint64_t length);
  // Whether the request commits the volume's log: a FLUSH, or a data
  // command with FUA.
  static bool Commits(uint16_t command, bool fua);
  // The "alone" rule: `idle`, nothing else of the connection in flight;
  // `buffered_bytes`, input already received past the request's header;
  // `commit_would_sync`, for a request that Commits(), the volume's hint
  // that its commit would wait for a txg sync (Volume::MayWait of a
  // flush). Such a request is submitted: a client that sends independent
  // requests on one connection (the kernel, nbdfuse) may send more while
  // it waits, and the reader must not sit out a txg sync meanwhile.
  bool RunsAlone(uint16_t command, uint64_t length, bool fua, bool idle, uint64_t buffered_bytes,
                 bool commit_would_sync) const;
  // Whether the "hinted" rule asks the volume at all (then RunsHinted
  // decides with its answer): a short data command, or a READ or WRITE of
  // up to kInlineMaxHintedBytes, without FUA.
  bool MayRunHinted(uint16_t command, uint64_t length, bool fua) const;

  // The request was dispatched: inline or not, of `length` bytes. True
  // when the replies held back must be sent now (the burst, or a long
  // inline request).
  bool Dispatched(bool run_inline, uint64_t length);
  // The replies held back were sent.
  void RepliesSent() { inline_burst_ = 0; }

 private:
  const Options options_;
  uint32_t inline_burst_ = 0;
};

}  // namespace arcstore::nbd
