// AccessPolicy: which client identity may see and open which export, and
// whether read-only. Parsed from an access file (ServerOptions::access_file).
//
// Grammar (one item a line; '#' starts a comment; blank lines ignored;
// spaces around names are trimmed):
//
//   file     := { section }
//   section  := "[" identity "]" { grant }
//   grant    := volume "=" ( "ro" | "rw" )
//   identity := a PSK username, a certificate subject as the server logs
//               it (RFC 4514, "CN=host1,O=Example"), or a special name:
//                 @anonymous  connections with no identity (plaintext under
//                             --tls on, X.509 without --tls-verify-peer)
//                 @unix       unix-socket connections without TLS; without
//                             this section they may open every export (the
//                             socket file's permissions decide who connects)
//   volume   := an export name, or "*" for every export
//
//   [alice]
//   vol0 = rw
//   * = ro
//
// An identity without a section sees nothing. A grant naming the volume
// beats "*". An export served read-only stays read-only whatever the grant.
// Errors name file:line and what is wrong; a file with any error is refused
// whole.
//
// Thread-safety: immutable once parsed; shared between connections through
// shared_ptr<const AccessPolicy>, swapped whole on reload.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/result.h"

namespace arcstore::nbd {

enum class Access { kNone, kReadOnly, kReadWrite };

inline constexpr char kAnonymousIdentity[] = "@anonymous";
inline constexpr char kUnixIdentity[] = "@unix";

class AccessPolicy {
 public:
  // Everyone may open every export read-write (no access file).
  static std::shared_ptr<const AccessPolicy> AllowAll();
  // Parses `text`; `origin` (a path) starts each error message.
  static Result<std::shared_ptr<const AccessPolicy>> Parse(const std::string& text,
                                                           const std::string& origin);
  static Result<std::shared_ptr<const AccessPolicy>> Load(const std::string& path);

  // What `identity` may do with export `volume`. "" is mapped to
  // @anonymous by the caller (Handshake).
  Access Lookup(const std::string& identity, const std::string& volume) const;
  size_t identities() const { return grants_.size(); }

 private:
  using Grants = std::map<std::string, Access>;  // volume (or "*") -> access
  bool allow_all_ = false;
  std::map<std::string, Grants> grants_;  // identity -> its grants
};

}  // namespace arcstore::nbd
