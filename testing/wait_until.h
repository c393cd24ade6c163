// WaitUntil: for tests that observe what a server's own threads do (stats
// counted, sessions freed) with no event to wait on.
#pragma once

#include <chrono>
#include <thread>

namespace arcstore::testing {

// Polls `pred` every millisecond until it holds (true) or 10 s pass (false).
template <typename Pred>
bool WaitUntil(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace arcstore::testing
