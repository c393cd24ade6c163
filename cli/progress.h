// A progress line on a terminal: rewritten in place on stderr while a long
// step runs (a pool file written once), and nothing at all when stderr is
// not a terminal, so logs and pipes stay clean.
//
// Thread-safety: one thread; the callback runs on the thread doing the work.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "base/units.h"

namespace arcstore::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::string what) : what_(std::move(what)), shown_(isatty(STDERR_FILENO)) {}
  ~ProgressLine() { Done(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // A callback for (done, total) bytes; empty when nothing is shown.
  std::function<void(uint64_t, uint64_t)> callback() {
    if (!shown_) return {};
    return [this](uint64_t done, uint64_t total) {
      std::fprintf(stderr, "\r%s: %s of %s (%.0f%%)", what_.c_str(), FormatBytes(done).c_str(),
                   FormatBytes(total).c_str(),
                   total == 0 ? 100.0 : 100.0 * static_cast<double>(done) / static_cast<double>(total));
      std::fflush(stderr);
      printed_ = true;
    };
  }
  // Ends the line (once something was printed).
  void Done() {
    if (printed_) std::fputs("\n", stderr);
    printed_ = false;
  }

 private:
  std::string what_;
  bool shown_;
  bool printed_ = false;
};

}  // namespace arcstore::cli
