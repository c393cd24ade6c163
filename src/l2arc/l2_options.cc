// L2CacheOptions::Validate and the cache's stats (l2_cache.h).
#include <string>

#include "l2arc/l2_cache.h"

namespace arcstore::l2arc {

namespace {

Status OutOfBounds(std::string_view field, uint64_t value, std::string_view bounds) {
  return Status::InvalidArgument("l2arc: " + std::string(field) + " " + std::to_string(value) +
                                 " out of bounds " + std::string(bounds));
}

}  // namespace

Status L2CacheOptions::Validate() const {
  if (slot_bytes < (256u << 10) || slot_bytes > (16u << 20) || slot_bytes % kMinBlockBytes != 0) {
    return OutOfBounds("slot_bytes", slot_bytes, "[256 KiB, 16 MiB], a multiple of 512");
  }
  if (write_max_bytes < (64u << 10) || write_max_bytes > (1ull << 30)) {
    return OutOfBounds("write_max_bytes", write_max_bytes, "[64 KiB, 1 GiB]");
  }
  if (write_boost_bytes > (1ull << 30)) {
    return OutOfBounds("write_boost_bytes", write_boost_bytes, "[0, 1 GiB]");
  }
  if (feed_interval_ms < 10 || feed_interval_ms > 60000) {
    return OutOfBounds("feed_interval_ms", feed_interval_ms, "[10, 60000]");
  }
  if (max_block_bytes < kMinBlockBytes || max_block_bytes > (16u << 20) ||
      max_block_bytes > slot_bytes) {
    return OutOfBounds("max_block_bytes", max_block_bytes, "[512, 16 MiB] and at most slot_bytes");
  }
  return Status::Ok();
}

L2Stats::L2Stats(stats::Registry* r, std::string_view m)
    : hits(r->AddCounter(m, "hits", stats::Unit::kOps, "reads served by the cache device")),
      misses(r->AddCounter(m, "misses", stats::Unit::kOps, "reads of blocks not cached")),
      read_bytes(r->AddCounter(m, "read_bytes", stats::Unit::kBytes, "bytes served")),
      checksum_errors(r->AddCounter(m, "checksum_errors", stats::Unit::kOps,
                                    "cached copies whose checksum did not match (dropped)")),
      io_errors(r->AddCounter(m, "io_errors", stats::Unit::kOps,
                              "failed reads and slot writes of the cache device")),
      feeds(r->AddCounter(m, "feeds", stats::Unit::kOps, "buffers accepted")),
      feed_bytes(r->AddCounter(m, "feed_bytes", stats::Unit::kBytes, "bytes accepted")),
      feed_refused_budget(r->AddCounter(m, "feed_refused_budget", stats::Unit::kOps,
                                        "offers over the feed interval's budget")),
      feed_refused_busy(r->AddCounter(m, "feed_refused_busy", stats::Unit::kOps,
                                      "offers refused because sealed slots wait for the writer")),
      feed_refused_other(r->AddCounter(m, "feed_refused_other", stats::Unit::kOps,
                                       "offers of a bad size, prefetched only, during the "
                                       "rebuild, or with the index full")),
      slots_written(
          r->AddCounter(m, "slots_written", stats::Unit::kOps, "slots written to the ring")),
      write_bytes(r->AddCounter(m, "write_bytes", stats::Unit::kBytes, "bytes of slot writes")),
      evicted_entries(r->AddCounter(m, "evicted_entries", stats::Unit::kOps,
                                    "entries removed because their slot was overwritten")),
      rebuild_entries(r->AddCounter(m, "rebuild_entries", stats::Unit::kOps,
                                    "entries restored from the device at open")),
      rebuild_dropped(r->AddCounter(m, "rebuild_dropped", stats::Unit::kOps,
                                    "entries not restored: born in a txg that never committed")),
      rebuild_bad_slots(r->AddCounter(m, "rebuild_bad_slots", stats::Unit::kOps,
                                      "damaged slot headers skipped at rebuild")),
      size(r->AddGauge(m, "size", stats::Unit::kBytes, "data bytes cached")),
      asize(r->AddGauge(m, "asize", stats::Unit::kBytes,
                        "device bytes of the slots holding entries")),
      hdr_size(r->AddGauge(m, "hdr_size", stats::Unit::kBytes, "index memory")),
      entries(r->AddGauge(m, "entries", stats::Unit::kNone, "blocks cached")) {}

}  // namespace arcstore::l2arc
