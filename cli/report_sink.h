// Where a command's report goes: standard output, or a file created under
// the output-file rule (format/output_file.h) when the command starts, so
// that a refused path costs no run (bench --output and its JSON report, sim
// --json).
//
// Thread-safety: one thread.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"
#include "format/output_file.h"

namespace arcstore::cli {

class ReportSink {
 public:
  ReportSink() = default;
  // `option` names the file in errors ("--output", "--json").
  ReportSink(const std::string& path, bool replace_existing, const std::string& option) {
    format::OutputFileOptions o;
    o.replace_existing = replace_existing;
    path_ = OrFail(format::ResolveOutputPath(path), option);
    fd_ = OrFail(format::CreateOutputFile(path_, o), option);
  }
  ~ReportSink() {
    if (fd_ >= 0) ::close(fd_);
  }
  ReportSink(const ReportSink&) = delete;
  ReportSink& operator=(const ReportSink&) = delete;

  void Write(const std::string& text) {
    if (fd_ < 0) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      return;
    }
    for (size_t done = 0; done < text.size();) {
      ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw CommandFailed("cannot write " + path_ + ": " + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace arcstore::cli
