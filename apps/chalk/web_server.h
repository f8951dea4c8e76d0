// The HTTP side of `chalk web` that cpp-httplib leaves to its user (issue 28 §3, "slow
// clients cannot starve it"): httplib's per-read timeout lets a client that sends one
// header line every few seconds hold a thread for ever, and it serves any number of
// connections from one client. BoundedServer keeps httplib's parser and routing
// (Server::process_request) and replaces only its connection loop: a cap on the
// connections one client address holds at once, a deadline for reading each request
// whole (head and body) and a cap on its bytes (chunked bodies included), and the request's socket made visible to its handler, which
// asks client_gone() to abandon work nobody waits for.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include <httplib.h>

namespace chalk::cli::web {

struct ConnectionLimits {
  size_t per_client = 32;                           ///< connections one client address holds at once
  std::chrono::milliseconds request_read{10000};    ///< reading one request's head and body, at most
  /// Bytes of one request on the wire (head, body and chunked framing), at most: httplib
  /// bounds a Content-Length body but reads a chunked one whole, however long.
  size_t request_bytes = size_t{3} << 20;
  /// Writing one response, at most (from its first byte): a client that reads slowly
  /// cannot hold a thread for longer.
  std::chrono::milliseconds response_write{30000};
};

class BoundedServer : public httplib::Server {
 public:
  explicit BoundedServer(ConnectionLimits limits) : limits_(limits) {}

  /// True when the client of the request this thread is handling has closed its connection
  /// (or reset it). False outside a request.
  static bool client_gone();

  /// True when the request this thread is answering was cut off at
  /// ConnectionLimits::request_bytes (the error handler answers 413 for it).
  static bool request_too_large();

  /// Widens the bound socket's queue of connections not yet accepted to `backlog` (httplib
  /// 0.11 listens with 5: a burst of connections then waits for SYN retries, a second or
  /// more). Call after bind_to_port; false when listen() fails.
  bool set_backlog(int backlog);

 private:
  bool process_and_close_socket(socket_t sock) override;

  ConnectionLimits limits_;
  std::mutex mutex_;
  std::map<std::string, size_t> open_;  ///< connections held, by client address
};

}  // namespace chalk::cli::web
