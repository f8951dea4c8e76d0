#include "web_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace chalk::cli::web {
namespace {

using Clock = std::chrono::steady_clock;

thread_local int tl_request_socket = -1;
thread_local bool tl_request_too_large = false;

/// The numeric address and port of a socket's peer (or its own end).
void address_of(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  ip.clear();
  port = 0;
  if ((peer ? getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len) : getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len)) != 0) {
    return;
  }
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof(buf));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof(buf));
    port = ntohs(a->sin6_port);
  }
  ip = buf;
}

/// Waits up to `timeout` for `events` on `sock`: > 0 ready, 0 timed out, < 0 error.
int wait_for(int sock, short events, std::chrono::milliseconds timeout) {
  pollfd p{sock, events, 0};
  const int ms = static_cast<int>(std::clamp<int64_t>(timeout.count(), 0, 1 << 30));
  int r;
  do {
    r = poll(&p, 1, ms);
  } while (r < 0 && errno == EINTR);
  return r;
}

/// A connection's stream for httplib's parser: reads are buffered and each request must
/// arrive whole before its deadline, however slowly its bytes trickle in; writes wait at
/// most the write timeout.
class DeadlineStream : public httplib::Stream {
 public:
  DeadlineStream(int sock, std::chrono::milliseconds read_timeout, std::chrono::milliseconds write_timeout, size_t max_bytes,
                 std::chrono::milliseconds response_write)
      : sock_(sock), read_timeout_(read_timeout), write_timeout_(write_timeout), response_write_(response_write), max_bytes_(max_bytes) {}

  /// Starts the next request: its reading deadline and its byte count.
  void start_request(std::chrono::milliseconds limit) {
    deadline_ = Clock::now() + limit;
    read_ = 0;
    write_deadline_ = Clock::time_point::max();
    tl_request_too_large = false;
  }

  bool is_readable() const override { return pos_ < len_ || wait_for(sock_, POLLIN, remaining()) > 0; }
  bool is_writable() const override {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(write_deadline_ - Clock::now());
    return wait_for(sock_, POLLOUT, std::max(std::chrono::milliseconds(0), std::min(write_timeout_, left))) > 0;
  }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == len_) {
      if (wait_for(sock_, POLLIN, remaining()) <= 0) return -1;  // the deadline or the read timeout passed
      ssize_t n;
      do {
        n = recv(sock_, buf_, sizeof(buf_), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      pos_ = 0;
      len_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, len_ - pos_);
    if (read_ + n > max_bytes_) {
      tl_request_too_large = true;
      return -1;
    }
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    read_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (write_deadline_ == Clock::time_point::max()) write_deadline_ = Clock::now() + response_write_;  // the response's first bytes
    if (!is_writable()) return -1;
    ssize_t n;
    do {
      n = send(sock_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

  bool has_buffered() const { return pos_ < len_; }

 private:
  /// The read timeout or what is left of the request's deadline, whichever is shorter.
  std::chrono::milliseconds remaining() const {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    return std::max(std::chrono::milliseconds(0), std::min(read_timeout_, left));
  }

  int sock_;
  std::chrono::milliseconds read_timeout_, write_timeout_, response_write_;
  size_t max_bytes_, read_ = 0;
  Clock::time_point deadline_ = Clock::time_point::max(), write_deadline_ = Clock::time_point::max();
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
};

/// A short plain answer written before any request is read (the connection cap).
void refuse(int sock, const char* json) {
  char head[256];
  const int n = std::snprintf(head, sizeof(head),
                              "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                              "Retry-After: 1\r\nConnection: close\r\n\r\n",
                              std::strlen(json));
  if (wait_for(sock, POLLOUT, std::chrono::milliseconds(100)) > 0) {
    send(sock, head, static_cast<size_t>(n), MSG_NOSIGNAL);
    send(sock, json, std::strlen(json), MSG_NOSIGNAL);
  }
}

}  // namespace

bool BoundedServer::client_gone() {
  const int sock = tl_request_socket;
  if (sock < 0) return false;
  pollfd p{sock, POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool BoundedServer::request_too_large() { return tl_request_too_large; }

bool BoundedServer::set_backlog(int backlog) {
  const socket_t sock = svr_sock_;
  return sock != INVALID_SOCKET && ::listen(sock, backlog) == 0;  // Linux: listen() again resizes the queue
}

bool BoundedServer::process_and_close_socket(socket_t sock) {
  std::string ip;
  int port = 0;
  address_of(sock, true, ip, port);
  bool admitted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    admitted = open_[ip] < limits_.per_client;
    if (admitted) ++open_[ip];
  }
  bool ok = false;
  if (!admitted) {
    refuse(sock, "{\"error\": \"connection: too many open connections from this client; close some\", \"field\": \"connection\"}");
  } else {
    using std::chrono::milliseconds;
    using std::chrono::seconds;
    DeadlineStream strm(sock, std::chrono::duration_cast<milliseconds>(seconds(read_timeout_sec_)) + milliseconds(read_timeout_usec_ / 1000),
                        std::chrono::duration_cast<milliseconds>(seconds(write_timeout_sec_)) + milliseconds(write_timeout_usec_ / 1000),
                        limits_.request_bytes, limits_.response_write);
    const auto keep_alive = std::chrono::duration_cast<milliseconds>(seconds(keep_alive_timeout_sec_));
    // httplib's keep-alive loop (detail::process_server_socket), with a deadline per request.
    for (size_t count = keep_alive_max_count_; count > 0 && svr_sock_ != INVALID_SOCKET; --count) {
      if (!strm.has_buffered() && wait_for(sock, POLLIN, keep_alive) <= 0) break;
      strm.start_request(limits_.request_read);
      bool connection_closed = false;
      tl_request_socket = sock;
      ok = process_request(strm, count == 1, connection_closed, nullptr);
      tl_request_socket = -1;
      if (!ok || connection_closed) break;
    }
  }
  shutdown(sock, SHUT_RDWR);
  close(sock);
  if (admitted) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--open_[ip] == 0) open_.erase(ip);
  }
  return ok;
}

}  // namespace chalk::cli::web
