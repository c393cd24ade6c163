// libFuzzer target: the option phase of a server that requires TLS, before
// TLS is up (the fuzz input is the client's plaintext byte stream). Every
// option but ABORT and STARTTLS must be refused; STARTTLS reaches the
// transport's TLS handshake, which the in-memory transport fails, so the
// session ends there. Seeds: fuzz_corpus (the plaintext sessions).
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "nbd/connection.h"
#include "nbd/nbd_stats.h"
#include "stats/registry.h"
#include "testing/memory_volume.h"

namespace {

// PSK credentials from a key file written once for the fuzzing process.
const arcstore::nbd::TlsCredentials* Credentials() {
  static std::shared_ptr<const arcstore::nbd::TlsCredentials> creds = [] {
    char path[] = "/tmp/starttls_fuzzer.XXXXXX";
    int fd = mkstemp(path);
    const char key[] = "alice:00112233445566778899aabbccddeeff\n";
    if (fd < 0 || write(fd, key, sizeof(key) - 1) != static_cast<ssize_t>(sizeof(key) - 1)) {
      abort();
    }
    close(fd);
    arcstore::nbd::TlsOptions o;
    o.mode = arcstore::nbd::TlsMode::kRequire;
    o.psk_file = path;
    auto c = arcstore::nbd::TlsCredentials::Load(o);
    unlink(path);
    if (!c.ok()) abort();
    return *c;
  }();
  return creds.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arcstore;
  using namespace arcstore::nbd;
  std::vector<Export> exports = {
      {"a", std::make_shared<testing::MemoryVolume>(VolumeInfo{"a", 1, 256 << 10, 4096, "off"}),
       false, "rw"},
  };
  ServerOptions options;
  options.socket_path = "/unused";
  stats::Registry registry;
  NbdStats stats(&registry, {"a"});
  HandshakeSecurity security;
  security.mode = TlsMode::kRequire;
  security.credentials = Credentials();
  auto transport = std::make_unique<MemoryTransport>(std::span<const uint8_t>(data, size));
  PollBudget poll_budget(1);
  Connection c(std::move(transport), &exports, &options, &stats, &poll_budget,
               /*refuse=*/false, std::move(security));
  c.Serve();
  // Without TLS nothing may reach transmission.
  if (stats.handshakes_completed->Value() != 0) abort();
  return 0;
}
