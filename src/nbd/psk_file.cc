#include "nbd/psk_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace arcstore::nbd {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Longest key accepted: 512 bits is far beyond what psktool makes.
constexpr size_t kMaxKeyBytes = 64;
constexpr size_t kMaxUsernameBytes = 255;

}  // namespace

Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream out;
  out << in.rdbuf();
  std::string text = out.str();
  if (text.size() > max_bytes) {
    return Status::InvalidArgument(path + " is larger than " + std::to_string(max_bytes) +
                                   " bytes");
  }
  return text;
}

Result<PskFile> PskFile::Parse(const std::string& text, const std::string& origin) {
  PskFile f;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); number++) {
    const std::string where = origin + ":" + std::to_string(number) + ": ";
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) {
      return Status::InvalidArgument(where + "not username:hexkey");
    }
    std::string user = line.substr(0, colon);
    std::string hex = line.substr(colon + 1);
    if (user.empty() || user.size() > kMaxUsernameBytes) {
      return Status::InvalidArgument(where + "username empty or longer than 255 bytes");
    }
    if (hex.empty() || hex.size() % 2 != 0 || hex.size() / 2 > kMaxKeyBytes) {
      return Status::InvalidArgument(where + "key of '" + user +
                                     "' is not an even number of hex digits (at most 128)");
    }
    std::vector<uint8_t> key(hex.size() / 2);
    for (size_t i = 0; i < key.size(); i++) {
      int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
      if (hi < 0 || lo < 0) {
        return Status::InvalidArgument(where + "key of '" + user + "' has a non-hex digit");
      }
      key[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    if (!f.keys_.emplace(user, std::move(key)).second) {
      return Status::InvalidArgument(where + "username '" + user + "' given twice");
    }
  }
  if (f.keys_.empty()) return Status::InvalidArgument(origin + ": no keys");
  return f;
}

Result<PskFile> PskFile::Load(const std::string& path) {
  ARC_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, 1 << 20));
  return Parse(text, path);
}

const std::vector<uint8_t>* PskFile::Find(const std::string& username) const {
  auto it = keys_.find(username);
  return it == keys_.end() ? nullptr : &it->second;
}

}  // namespace arcstore::nbd
