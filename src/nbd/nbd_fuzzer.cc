// libFuzzer target: a whole NBD session (handshake and transmission) driven
// by the fuzz input as the client's byte stream, over in-memory volumes.
// Everything completes inline on this thread. Seeds: src/nbd/fuzz_corpus
// (made by tests/nbd/make_fuzz_corpus.py): valid sessions of every option
// and command for the fuzzer to mutate.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "nbd/connection.h"
#include "nbd/nbd_stats.h"
#include "stats/registry.h"
#include "testing/memory_volume.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arcstore;
  using namespace arcstore::nbd;
  std::vector<Export> exports = {
      {"a", std::make_shared<testing::MemoryVolume>(VolumeInfo{"a", 1, 256 << 10, 4096, "off"}),
       false, "rw"},
      {"ro", std::make_shared<testing::MemoryVolume>(VolumeInfo{"ro", 2, 64 << 10, 4096, "off"}),
       true, ""},
  };
  ServerOptions options;
  options.socket_path = "/unused";
  options.max_payload_bytes = 1 << 20;
  options.max_in_flight_bytes_per_connection = 4 << 20;
  stats::Registry registry;
  NbdStats stats(&registry, {"a", "ro"});
  auto transport = std::make_unique<MemoryTransport>(std::span<const uint8_t>(data, size));
  PollBudget poll_budget(1);
  Connection c(std::move(transport), &exports, &options, &stats, &poll_budget,
               /*refuse=*/size > 0 && data[size - 1] == 0xfe);
  c.Serve();
  return 0;
}
