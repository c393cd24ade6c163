#include "tools/source/control.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "stats/prometheus.h"
#include "stats/wire.h"
#include "tools/source/socket_server.h"

namespace arcstore::tools {

namespace {

std::string Ok(std::string_view body = {}) { return "ok\n" + std::string(body); }

std::string Error(const Status& s) {
  std::string m = s.ToString();
  for (char& c : m) {
    if (c == '\n') c = ' ';
  }
  return "error " + m + "\n";
}

// "start RING MODE PATH" or "stop", from `peer`.
std::string TraceRequest(StatsSource& source, std::string_view args, const ControlPeer& peer) {
  if (args == "stop") {
    Status s = source.StopTrace();
    return s.ok() ? Ok() : Error(s);
  }
  if (args.substr(0, 6) != "start ") {
    return Error(Status::InvalidArgument(
        "trace: want 'trace start RING_ENTRIES new|replace PATH' or 'trace stop'"));
  }
  args.remove_prefix(6);
  size_t space1 = args.find(' ');
  size_t space2 = space1 == std::string_view::npos ? space1 : args.find(' ', space1 + 1);
  if (space2 == std::string_view::npos || space2 + 1 >= args.size()) {
    return Error(Status::InvalidArgument("trace start: want RING_ENTRIES new|replace PATH"));
  }
  std::string ring_text(args.substr(0, space1));
  char* end = nullptr;
  unsigned long long ring = std::strtoull(ring_text.c_str(), &end, 10);
  if (ring_text.empty() || ring_text[0] == '-' || *end != '\0' || ring == 0 ||
      ring > kMaxTraceRingEntries) {
    return Error(Status::InvalidArgument("trace start: ring entries '" + ring_text.substr(0, 32) +
                                         "' not in 1.." + std::to_string(kMaxTraceRingEntries)));
  }
  std::string_view mode = args.substr(space1 + 1, space2 - space1 - 1);
  if (mode != "new" && mode != "replace") {
    return Error(Status::InvalidArgument("trace start: mode '" + std::string(mode.substr(0, 32)) +
                                         "' is not new or replace"));
  }
  if (!PeerMayWriteFiles(peer)) {
    return Error(Status::InvalidArgument(
        "trace start: refused for uid " + std::to_string(peer.uid) +
        ": only root or the server's own user may make it write files"));
  }
  Status s = source.StartTrace(std::string(args.substr(space2 + 1)), ring, mode == "replace");
  return s.ok() ? Ok() : Error(s);
}

// "add PATH" or "remove PATH", from `peer`: the server writes the device,
// so the same peers as for a trace.
std::string CacheRequest(StatsSource& source, std::string_view args, const ControlPeer& peer) {
  const bool add = args.substr(0, 4) == "add ";
  const bool remove = args.substr(0, 7) == "remove ";
  if (!add && !remove) {
    return Error(Status::InvalidArgument("cache: want 'cache add PATH' or 'cache remove PATH'"));
  }
  const std::string path(args.substr(add ? 4 : 7));
  if (path.empty() || path[0] != '/') {
    return Error(Status::InvalidArgument("cache: the device path must be absolute"));
  }
  if (!PeerMayWriteFiles(peer)) {
    return Error(Status::InvalidArgument(
        "cache: refused for uid " + std::to_string(peer.uid) +
        ": only root or the server's own user may change the pool's cache devices"));
  }
  Status s = add ? source.AddCache(path) : source.RemoveCache(path);
  return s.ok() ? Ok() : Error(s);
}

ControlPeer PeerOf(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    // Not a unix socket, or no credentials: nobody in particular.
    return ControlPeer{UINT32_MAX, 0};
  }
  return ControlPeer{static_cast<uint32_t>(cred.uid), static_cast<int32_t>(cred.pid)};
}

}  // namespace

bool PeerMayWriteFiles(const ControlPeer& peer) {
  return peer.uid == 0 || peer.uid == static_cast<uint32_t>(::geteuid());
}

std::string TraceStartRequest(const std::string& path, uint64_t ring_entries,
                              bool replace_existing) {
  return "trace start " + std::to_string(ring_entries) + (replace_existing ? " replace " : " new ") +
         path;
}

std::string HandleControlRequest(StatsSource& source, std::string_view request,
                                 const ControlPeer& peer) {
  while (!request.empty() && (request.back() == '\r' || request.back() == ' ')) request.remove_suffix(1);
  if (request == "stats") {
    Result<stats::Snapshot> s = source.TakeSnapshot();
    return s.ok() ? Ok(stats::ToWireJson(*s)) : Error(s.status());
  }
  if (request == "info") {
    Result<PoolInfo> info = source.Info();
    return info.ok() ? Ok(PoolInfoToJson(*info).dump()) : Error(info.status());
  }
  if (request == "txgs") {
    Result<std::vector<TxgRow>> rows = source.TxgHistory();
    return rows.ok() ? Ok(TxgRowsToJson(*rows).dump()) : Error(rows.status());
  }
  if (request.substr(0, 6) == "trace ") return TraceRequest(source, request.substr(6), peer);
  if (request.substr(0, 6) == "cache ") return CacheRequest(source, request.substr(6), peer);
  std::string shown(request.substr(0, 64));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return Error(Status::InvalidArgument("unknown control request '" + shown +
                                       "' (want stats, txgs, info, trace start, trace stop, "
                                       "cache add, cache remove)"));
}

void ServeControlConnection(StatsSource& source, int fd, uint32_t timeout_ms) {
  Result<std::string> req = ReadUntil(fd, "\n", kMaxControlRequestBytes, timeout_ms);
  std::string reply;
  if (!req.ok()) {
    reply = Error(Status::InvalidArgument("control request: " + req.status().message()));
  } else {
    std::string_view line = *req;
    size_t nl = line.find('\n');
    reply = HandleControlRequest(source, nl == std::string_view::npos ? line : line.substr(0, nl),
                                 PeerOf(fd));
  }
  (void)WriteAll(fd, reply, timeout_ms);
}

Result<std::string> ControlCall(const std::string& socket_path, std::string_view request,
                                uint32_t timeout_ms) {
  if (request.size() + 1 > kMaxControlRequestBytes || request.find('\n') != std::string_view::npos) {
    return Status::InvalidArgument("control request longer than " +
                                   std::to_string(kMaxControlRequestBytes) + " bytes or multi-line");
  }
  ARC_ASSIGN_OR_RETURN(int fd, ConnectUnix(socket_path));
  Status w = WriteAll(fd, std::string(request) + "\n", timeout_ms);
  Result<std::string> reply = w.ok() ? ReadToEnd(fd, stats::kMaxWireBytes + 4096, timeout_ms)
                                     : Result<std::string>(w);
  ::close(fd);
  if (!reply.ok()) {
    return Status::IOError(socket_path + ": " + reply.status().message());
  }
  size_t nl = reply->find('\n');
  std::string status_line = reply->substr(0, nl);
  if (status_line == "ok") return nl == std::string::npos ? std::string() : reply->substr(nl + 1);
  if (status_line.substr(0, 6) == "error ") {
    return Status::Aborted(socket_path + ": " + status_line.substr(6));
  }
  return Status::Corruption(socket_path + ": reply without a status line");
}

std::string HandleMetricsRequest(StatsSource& source, std::string_view http_request) {
  auto response = [](std::string_view status, std::string_view type, std::string_view body) {
    return "HTTP/1.1 " + std::string(status) + "\r\nContent-Type: " + std::string(type) +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
           std::string(body);
  };
  size_t eol = http_request.find("\r\n");
  std::string_view line = http_request.substr(0, eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) {
    return response("400 Bad Request", "text/plain", "bad request line\n");
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (method != "GET") return response("405 Method Not Allowed", "text/plain", "GET only\n");
  if (target != "/metrics" && target != "/") {
    return response("404 Not Found", "text/plain", "try /metrics\n");
  }
  Result<stats::Snapshot> s = source.TakeSnapshot();
  if (!s.ok()) return response("500 Internal Server Error", "text/plain", s.status().ToString() + "\n");
  return response("200 OK", "text/plain; version=0.0.4; charset=utf-8", stats::ToPrometheusText(*s));
}

void ServeMetricsConnection(StatsSource& source, int fd, uint32_t timeout_ms) {
  Result<std::string> req = ReadUntil(fd, "\r\n\r\n", kMaxHttpRequestBytes, timeout_ms);
  std::string reply =
      req.ok() ? HandleMetricsRequest(source, *req)
               : "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  (void)WriteAll(fd, reply, timeout_ms);
}

}  // namespace arcstore::tools
