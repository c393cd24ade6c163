// TwoQSim: the full 2Q of Johnson & Shasha (VLDB '94), page-granular.
//
//   miss, key unknown ------> A1in (FIFO, Kin pages) --evict--> A1out (ghost FIFO, Kout keys)
//   miss, key in A1out -----> Am (LRU) <-- hit in Am moves to front; a hit in A1in stays put
//
// Room is made by evicting A1in's oldest page into A1out when A1in holds more
// than Kin pages, else Am's LRU page (forgotten). Kin and Kout default to the
// paper's recommended 25% and 50% of c; the ARC paper's 2Q columns used the
// best offline values instead, which are not published.
//
// Invariants: |A1in| + |Am| <= c, |A1out| <= Kout.
//
// Thread-safety: none; one simulator per thread.
#pragma once

#include <cstdint>

#include "arc/flat_table.h"
#include "base/result.h"
#include "tools/sim/page_list.h"

namespace arcstore::sim {

struct TwoQOptions {
  uint64_t cache_pages = 0;
  double kin_fraction = 0.25;
  double kout_fraction = 0.50;
  Status Validate() const;
};

class TwoQSim {
 public:
  explicit TwoQSim(const TwoQOptions& options);  // options must Validate()

  bool Access(uint64_t key);
  uint64_t hits() const { return hits_; }
  uint64_t resident() const { return a1in_.size() + am_.size(); }
  uint64_t ghosts() const { return a1out_.size(); }
  Status CheckInvariants() const;

 private:
  enum : Where { kA1in = 1, kA1out, kAm };
  void MakeRoom();

  const uint64_t c_;
  const uint64_t kin_;
  const uint64_t kout_;
  NodePool pool_;
  arc::FlatTable<PageNode> table_;
  PageList a1in_, a1out_, am_;
  uint64_t hits_ = 0;
};

}  // namespace arcstore::sim
