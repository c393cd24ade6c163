// The fio command that runs the same jobs with real fio against a volume
// served by `arcstore serve` over NBD (fio's nbd engine), so that users can
// cross-check the bench's figures (arcstore bench --print-fio-command).
//
// Options are passed as written; filename, directory, filename_format and
// ioengine are replaced by --ioengine=nbd and the volume's NBD URI.
//
// Thread-safety: a pure function.
#pragma once

#include <functional>
#include <string>

#include "bench/job_file.h"

namespace arcstore::bench {

// `uri_for_volume` gives the NBD URI of a volume name, for example
// "nbd+unix:///vol1?socket=/run/arcstore.sock".
std::string FioCommandFor(const JobSet& set,
                          const std::function<std::string(const std::string& volume)>& uri_for_volume);

// Quotes a word for a POSIX shell when it needs it.
std::string ShellQuote(const std::string& word);

}  // namespace arcstore::bench
