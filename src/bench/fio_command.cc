#include "bench/fio_command.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace arcstore::bench {
namespace {

bool Replaced(const std::string& key) {
  return key == "filename" || key == "directory" || key == "filename_format" || key == "ioengine" ||
         key == "name";
}

std::string Arg(const std::string& key, const std::string& value) {
  return " " + ShellQuote("--" + key + (value.empty() ? "" : "=" + value));
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string ShellQuote(const std::string& w) {
  bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_=.,:/+%@").find(c) != std::string_view::npos;
  });
  if (plain) return w;
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string FioCommandFor(const JobSet& set,
                          const std::function<std::string(const std::string&)>& uri_for_volume) {
  std::string cmd = "fio";
  for (const auto& [k, v] : set.global_written) {
    if (!Replaced(k)) cmd += Arg(k, v);
  }
  for (const Job& j : set.jobs) {
    cmd += Arg("name", j.name);
    for (const auto& [k, v] : j.written) {
      if (!Replaced(k)) cmd += Arg(k, v);
    }
    // fio's nbd engine has one export per job; clones share it.
    std::string volume = !j.filename.empty() ? Basename(j.filename) : j.name + ".0.0";
    cmd += Arg("ioengine", "nbd") + Arg("uri", uri_for_volume(volume));
  }
  return cmd;
}

}  // namespace arcstore::bench
