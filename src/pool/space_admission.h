// SpaceAdmission: a pool's space accounting for writers.
//
// Copy-on-write needs new space for every record a txg writes, and the old
// copies come back only txgs later (deferred frees). SpaceAdmission charges
// a writer's new data against the pool's space BEFORE the writer joins a
// txg, so that a sync never runs out of data space, and makes a writer that
// does not fit wait for the txg syncs that free space instead of failing.
// See space_admission.cc for the theory of operation.
//
// Thread-safety: all methods are thread-safe. Reserve() may block (it waits
// for txg syncs); it must not be called while holding a txg hold. Settle()
// is called while holding the hold of the txg it charges. Committed() is
// called by the txg sync thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/clock.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "space/allocator.h"
#include "stats/registry.h"
#include "txg/txg_manager.h"
#include "volume/volume_impl.h"

namespace arcstore::pool {

struct SpaceAdmissionOptions {
  std::string pool_name;
  // Free bytes new data may never take: the allocator's metadata reserve
  // plus the slop (room for the metadata of the txgs in flight).
  uint64_t floor_bytes = 0;
  // The open txg is asked to sync (reason space) once the new data charged
  // to it passes this share of the room left at the last commit (free bytes
  // above the floor); 0: never (txgs end for other reasons, and writers
  // that do not fit wait for a forced sync).
  uint32_t kick_percent = 25;
  // Syncs one writer waits for before it gives up (NoSpace), even though
  // frees are still pending: the bound on a writer that others keep
  // beating to the space freed.
  uint32_t max_wait_syncs = 64;

  Status Validate() const;
};

class SpaceAdmission final : public volume::SpaceAccount {
 public:
  // `usage` is the allocator's state at the pool's last committed txg
  // `committed_txg`. `txg` and `clock` must outlive this object.
  SpaceAdmission(const SpaceAdmissionOptions& options, txg::TxgManager* txg, Clock* clock,
                 stats::Registry* registry, const space::SpaceUsage& usage,
                 uint64_t committed_txg);

  // volume::SpaceAccount.
  Status Reserve(uint64_t bytes, const std::string& volume) override;
  void Settle(uint64_t reserved_bytes, uint64_t txg, uint64_t used_bytes) override;

  // Txg `txg` has committed; `usage` is the allocator's state after it (its
  // allocations made, the frees it aged released).
  void Committed(uint64_t txg, const space::SpaceUsage& usage);

  // New data admitted and not yet committed (reserved or charged to a txg).
  uint64_t uncommitted_bytes();

 private:
  bool Fits(uint64_t bytes) const ARC_REQUIRES(mu_);
  std::string Describe(uint64_t bytes, const std::string& volume, uint32_t syncs) const
      ARC_REQUIRES(mu_);

  const SpaceAdmissionOptions options_;
  txg::TxgManager* const txg_;
  Clock* const clock_;

  Mutex mu_;
  space::SpaceUsage usage_ ARC_GUARDED_BY(mu_);
  uint64_t committed_txg_ ARC_GUARDED_BY(mu_);
  uint64_t reserved_bytes_ ARC_GUARDED_BY(mu_) = 0;          // writers not yet in a txg
  std::map<uint64_t, uint64_t> charged_ ARC_GUARDED_BY(mu_);  // txg -> new data bytes
  uint64_t charged_bytes_ ARC_GUARDED_BY(mu_) = 0;           // sum of charged_
  uint64_t kicked_txg_ ARC_GUARDED_BY(mu_) = 0;

  struct Stats {
    stats::Counter* waits;
    stats::Counter* wait_ns;
    stats::Counter* refusals;
    stats::Counter* kicks;
  } stats_;
};

}  // namespace arcstore::pool
