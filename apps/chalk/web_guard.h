// What `chalk web` checks of a request before it routes it (issue 28 §3, "no other page
// can drive it", "HTTP done right"). Pure functions of the request's head, apart from the
// HTTP library (cmd_web.cc calls them from its pre-routing handler), so the fuzz harness
// and the tests reach them directly.
#pragma once

#include <optional>
#include <string>

#include "web_api.h"

namespace chalk::cli::web {

/// The parts of a request's head the guard reads. Absent headers are nullopt.
struct RequestHead {
  std::string method;                       ///< "GET", "POST", ...
  std::string path;                         ///< decoded ("%ff" is the byte 0xff)
  std::optional<std::string> host, origin, content_type, content_length, transfer_encoding;
  /// The first of Host, Origin, Content-Type, Content-Length and Transfer-Encoding given
  /// more than once (which copy counts would be the client's and the server's guess), or "".
  std::string repeated;
};

/// The refusal of a request, or nullopt to route it:
/// - 400 `path`: the decoded path is not valid UTF-8 ("%ff");
/// - 400 `Transfer-Encoding`: both Content-Length and Transfer-Encoding (request smuggling);
/// - 400 naming the header: one of those the guard reads given twice;
/// - 400 `Host`: no Host header;
/// - 403 `Host`: a Host that is not a loopback name (127.0.0.1, localhost, [::1], any port)
///   unless `allow_remote` (a page on another site reaching the server by DNS rebinding);
/// - 403 `Origin`: an Origin (sent by browsers on cross-site requests) whose host is not a
///   loopback name, or with `allow_remote` is not the Host itself; "null" included;
/// - 415 `Content-Type`: a POST whose media type is not application/json (a page may post
///   text/plain across sites without asking; application/json needs a preflight, and
///   OPTIONS answers 405).
std::optional<ApiReply> guard_request(const RequestHead& h, bool allow_remote);

/// True when `host` (a Host header or an Origin's host, with an optional ":port"; IPv6 in
/// brackets) names this machine: localhost, 127.0.0.0/8 or ::1.
bool is_loopback_authority(const std::string& host);

/// True when `s` is valid UTF-8 (no overlong forms, surrogates or code points over U+10FFFF).
bool valid_utf8(const std::string& s);

}  // namespace chalk::cli::web
