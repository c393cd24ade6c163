#include "nbd/access.h"

#include <sstream>

#include "nbd/psk_file.h"

namespace arcstore::nbd {
namespace {

constexpr size_t kMaxAccessFileBytes = 1 << 20;
constexpr size_t kMaxNameBytes = 4096;

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// The line without its comment and surrounding blanks.
std::string Content(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const size_t hash = line.find('#');
  if (hash != std::string::npos) line.resize(hash);
  return Trim(line);
}

Status LineError(const std::string& where, const std::string& what) {
  return Status::InvalidArgument(where + what);
}

}  // namespace

std::shared_ptr<const AccessPolicy> AccessPolicy::AllowAll() {
  auto p = std::make_shared<AccessPolicy>();
  p->allow_all_ = true;
  return p;
}

Result<std::shared_ptr<const AccessPolicy>> AccessPolicy::Parse(const std::string& text,
                                                                const std::string& origin) {
  auto policy = std::make_shared<AccessPolicy>();
  std::istringstream in(text);
  std::string raw;
  Grants* section = nullptr;
  for (int number = 1; std::getline(in, raw); number++) {
    const std::string where = origin + ":" + std::to_string(number) + ": ";
    const std::string line = Content(raw);
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']') return LineError(where, "section header without a closing ']'");
      const std::string id = Trim(line.substr(1, line.size() - 2));
      if (id.empty()) return LineError(where, "empty identity in '[]'");
      if (id.size() > kMaxNameBytes) return LineError(where, "identity longer than 4096 bytes");
      if (id.front() == '@' && id != kAnonymousIdentity && id != kUnixIdentity) {
        return LineError(where, "unknown special identity '" + id +
                                    "' (known: @anonymous, @unix)");
      }
      auto [it, added] = policy->grants_.emplace(id, Grants{});
      if (!added) return LineError(where, "identity '" + id + "' has a section already");
      section = &it->second;
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) {
      return LineError(where, "expected '[identity]' or 'volume = ro|rw', got '" +
                                  line.substr(0, 64) + "'");
    }
    if (section == nullptr) return LineError(where, "grant before any [identity] section");
    const std::string volume = Trim(line.substr(0, eq));
    const std::string mode = Trim(line.substr(eq + 1));
    if (volume.empty()) return LineError(where, "grant without a volume name");
    if (volume.size() > kMaxNameBytes) return LineError(where, "volume name longer than 4096 bytes");
    Access access;
    if (mode == "ro") {
      access = Access::kReadOnly;
    } else if (mode == "rw") {
      access = Access::kReadWrite;
    } else {
      return LineError(where, "access of '" + volume + "' is '" + mode.substr(0, 64) +
                                  "', not ro or rw");
    }
    if (!section->emplace(volume, access).second) {
      return LineError(where, "volume '" + volume + "' granted twice in this section");
    }
  }
  return std::shared_ptr<const AccessPolicy>(std::move(policy));
}

Result<std::shared_ptr<const AccessPolicy>> AccessPolicy::Load(const std::string& path) {
  ARC_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxAccessFileBytes));
  return Parse(text, path);
}

Access AccessPolicy::Lookup(const std::string& identity, const std::string& volume) const {
  if (allow_all_) return Access::kReadWrite;
  auto it = grants_.find(identity);
  if (it == grants_.end()) {
    return identity == kUnixIdentity ? Access::kReadWrite : Access::kNone;
  }
  auto g = it->second.find(volume);
  if (g != it->second.end()) return g->second;
  g = it->second.find("*");
  return g == it->second.end() ? Access::kNone : g->second;
}

}  // namespace arcstore::nbd
