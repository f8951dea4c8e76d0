// `chalk web`: the blackboard in a browser (issue 18). A local HTTP server (cpp-httplib)
// serving the page embedded in the binary (web_assets.h) and the JSON API of web_api.h,
// described by /openapi.json.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <semaphore>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "chalk/base/error.h"
#include "commands.h"
#include "web_api.h"
#include "web_assets.h"
#include "web_guard.h"
#include "web_json.h"
#include "web_server.h"

namespace chalk::cli {
namespace {

struct WebArgs {
  int port = 8080;
  std::string host = "127.0.0.1";
  bool allow_remote = false;
  double request_seconds = 15;       ///< one API request's work, at most (then 503)
  int64_t request_steps = 4'000'000;  ///< simulator steps of one request, at most (413 up front, 503 while running)
};

/// Largest request body the API reads: 1 MiB (an uploaded config.json is a few KB).
constexpr size_t kMaxBody = size_t{1} << 20;
/// Threads reading and answering connections: a slow client holds one of these, never a
/// compute slot, and one client address holds at most kPerClient of them.
constexpr size_t kConnectionThreads = 64;
constexpr size_t kPerClient = 32;
/// Waiting for a compute slot, at most (then 503).
constexpr auto kSlotWait = std::chrono::seconds(5);

bool is_loopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

void reply(httplib::Response& res, const web::ApiReply& r) {
  res.status = r.status;
  res.set_content(web::dump_json(r.body), "application/json");
  if (r.status == 503) res.set_header("Retry-After", "1");
}

/// Runs API requests on at most one request per core at once: the rest wait for a slot
/// (kSlotWait, then 503), holding a connection thread but no CPU. Each runs under a
/// budget: the deadline, the step budget and its client's connection (request_budget.h).
class ComputeSlots {
 public:
  explicit ComputeSlots(const WebArgs& a) : slots_(std::max<std::ptrdiff_t>(2, std::thread::hardware_concurrency())), args_(a) {}

  web::ApiReply run(const web::ApiEndpoint& e, const std::string& body) {
    if (!slots_.try_acquire_for(kSlotWait)) {
      return web::api_error(503, "request", fmt::format("the server is busy (every compute slot ran for {} s); try again", kSlotWait.count()));
    }
    struct Release {
      std::counting_semaphore<>& s;
      ~Release() { s.release(); }
    } release{slots_};
    if (web::BoundedServer::client_gone()) return web::api_error(503, "request", "the client closed its connection before the work started");
    RequestBudget budget;
    budget.deadline_s = args_.request_seconds;
    budget.deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(args_.request_seconds));
    budget.max_steps = args_.request_steps;
    budget.client_gone = &web::BoundedServer::client_gone;
    return web::call_api(e, body, &budget);
  }

 private:
  std::counting_semaphore<> slots_;
  const WebArgs& args_;
};

/// The request's head as the guard reads it (web_guard.h).
web::RequestHead head_of(const httplib::Request& req) {
  web::RequestHead h;
  h.method = req.method;
  h.path = req.path;
  auto header = [&](const char* name) -> std::optional<std::string> {
    if (!req.has_header(name)) return std::nullopt;
    return req.get_header_value(name);
  };
  h.host = header("Host");
  h.origin = header("Origin");
  h.content_type = header("Content-Type");
  h.content_length = header("Content-Length");
  h.transfer_encoding = header("Transfer-Encoding");
  for (const char* name : {"Host", "Origin", "Content-Type", "Content-Length", "Transfer-Encoding"}) {
    if (h.repeated.empty() && req.get_header_value_count(name) > 1) h.repeated = name;
  }
  return h;
}

void run_web(const WebArgs& a) {
  if (a.port < 0 || a.port > 65535) throw InputError("--port", fmt::format("expected 0..65535 (0: any free port), got {}", a.port));
  if (!is_loopback(a.host)) {
    if (!a.allow_remote) {
      throw InputError("--host", fmt::format("'{}' is not loopback; the server has no authentication, so serving other machines "
                                             "needs --allow-remote",
                                             a.host));
    }
    std::cerr << "chalk web: warning: serving on " << a.host << ": anyone who can reach this address can use the server (no authentication)\n";
  }
  if (!(a.request_seconds > 0 && a.request_seconds <= 3600)) {
    throw InputError("--request-seconds", fmt::format("expected 0 < seconds <= 3600, got {}", a.request_seconds));
  }
  if (a.request_steps < 1) throw InputError("--request-steps", fmt::format("expected at least 1, got {}", a.request_steps));
  web::BoundedServer server(web::ConnectionLimits{kPerClient, std::chrono::seconds(10), 2 * kMaxBody + (size_t{64} << 10), std::chrono::seconds(30)});
  server.new_task_queue = [] { return new httplib::ThreadPool(kConnectionThreads); };
  server.set_payload_max_length(kMaxBody);
  server.set_read_timeout(5, 0);   // one read: 5 s; a whole request: 10 s (ConnectionLimits)
  server.set_write_timeout(5, 0);
  server.set_keep_alive_max_count(100);
  server.set_keep_alive_timeout(5);
  // httplib writes a response's headers and body apart: without TCP_NODELAY, Nagle holds
  // the body until the client's delayed ACK, 40 ms a request on Linux loopback.
  server.set_tcp_nodelay(true);
  // httplib's default sets SO_REUSEPORT, so a second server on a port in use would bind and
  // share it silently; SO_REUSEADDR alone makes a busy port an error.
  server.set_socket_options([](auto sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413 || web::BoundedServer::request_too_large()) {
      reply(res, web::api_error(413, "body", fmt::format("larger than {} bytes (1 MiB)", kMaxBody)));
    } else if (res.status == 404) {
      reply(res, web::api_error(404, "path", fmt::format("no page or endpoint at '{}'", web::utf8_prefix(req.path, 200))));
    } else if (res.status == 400) {
      reply(res, web::api_error(400, "request", "could not be read: a malformed request line, header or chunk, or it was not sent whole within 10 s"));
    } else {
      reply(res, web::api_error(res.status, "request", fmt::format("HTTP {}", res.status)));
    }
  });
  // httplib's own handler puts the exception's text in a header (EXCEPTION_WHAT): the text
  // is the server's business, so it goes to the log and the answer says only what failed.
  server.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& ex) {
      std::cerr << "chalk web: internal error on " << web::utf8_prefix(req.path, 200) << ": " << ex.what() << "\n";
    } catch (...) {
    }
    res.headers.clear();
    reply(res, web::api_error(500, "request", "internal error (the server's log says which)"));
  });
  // Before a request is routed or its body read: Host, Origin, content type, framing.
  const bool allow_remote = a.allow_remote;
  server.set_pre_routing_handler([allow_remote](const httplib::Request& req, httplib::Response& res) {
    if (auto refusal = web::guard_request(head_of(req), allow_remote)) {
      reply(res, *refusal);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  ComputeSlots slots(a);
  // Every request is matched here: an endpoint, an embedded file, or a 404. Paths are
  // looked up, never joined to a directory, so "../" and its encodings reach nothing.
  auto route = [&slots](const httplib::Request& req, httplib::Response& res) {
    const bool get = req.method == "GET" || req.method == "HEAD";
    if (const web::ApiEndpoint* e = web::find_endpoint(req.path)) {
      if (e->get ? !get : req.method != "POST") {
        res.set_header("Allow", e->get ? "GET, HEAD" : "POST");
        reply(res, web::api_error(405, "method", fmt::format("{} takes {}, not {}", e->path, e->get ? "GET" : "POST", web::utf8_prefix(req.method, 20))));
        return;
      }
      if (get && !req.params.empty()) {
        reply(res, web::api_error(400, web::utf8_prefix(req.params.begin()->first, 60), "unknown query parameter for " + e->path));
        return;
      }
      if (req.body.size() > kMaxBody) {  // a chunked body, which httplib does not bound
        reply(res, web::api_error(413, "body", fmt::format("larger than {} bytes (1 MiB)", kMaxBody)));
        return;
      }
      reply(res, slots.run(*e, req.body));
      return;
    }
    if (const web::WebAsset* f = web::find_asset(req.path)) {
      if (get) {
        res.set_header("Cache-Control", "no-cache");
        res.set_content(std::string(f->body), std::string(f->content_type).c_str());
      } else {
        res.set_header("Allow", "GET, HEAD");
        reply(res, web::api_error(405, "method", fmt::format("{} is a page: GET it, not {}", req.path, web::utf8_prefix(req.method, 20))));
      }
      return;
    }
    reply(res, web::api_error(404, "path", fmt::format("no page or endpoint at '{}'", web::utf8_prefix(req.path, 200))));
  };
  server.Get(".*", route);
  server.Post(".*", route);
  server.Put(".*", route);
  server.Delete(".*", route);
  server.Options(".*", route);
  server.Patch(".*", route);
  int port = a.port;
  if (port == 0) {
    port = server.bind_to_any_port(a.host);
    if (port < 0) throw InputError("--host", fmt::format("cannot listen on {}", a.host));
  } else if (!server.bind_to_port(a.host, port)) {
    throw InputError("--port", fmt::format("cannot listen on {}:{} (in use? --port 0 picks a free one)", a.host, port));
  }
  server.set_backlog(SOMAXCONN);
  std::cout << fmt::format("chalk web: http://{}:{}/ (Ctrl-C stops)", a.host.find(':') != std::string::npos ? "[" + a.host + "]" : a.host, port)
            << std::endl;
  if (!server.listen_after_bind()) throw std::runtime_error("the server stopped");
}

}  // namespace

void register_web(CLI::App& app, Action& run) {
  static thread_local WebArgs a;
  a = WebArgs{};
  auto* cmd = app.add_subcommand("web", web_description);
  cmd->add_option("-p,--port", a.port, "TCP port (0: any free port, printed on start)")->capture_default_str();
  cmd->add_option("--host", a.host, "Interface to listen on (default loopback; any other needs --allow-remote)")->capture_default_str();
  cmd->add_flag("--allow-remote", a.allow_remote, "Allow --host other than loopback, and Host and Origin headers other than loopback names "
                "(the server has no authentication)");
  cmd->add_option("--request-seconds", a.request_seconds, "One API request's work, at most: then 503 (seconds)")->capture_default_str();
  cmd->add_option("--request-steps", a.request_steps,
                  "Simulator steps of one API request, at most (each is kept in memory): more refused with 413 up front, 503 while running")
      ->capture_default_str();
  cmd->callback([&run] { run = [] { run_web(a); }; });
}

}  // namespace chalk::cli
