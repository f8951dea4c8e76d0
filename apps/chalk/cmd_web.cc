// `chalk web`: the blackboard in a browser (issue 18). A local HTTP server (cpp-httplib)
// serving the page embedded in the binary (web_assets.h) and the JSON API of web_api.h,
// described by /openapi.json.
#include <cstring>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <httplib.h>

#include "chalk/base/error.h"
#include "commands.h"
#include "web_api.h"
#include "web_assets.h"

namespace chalk::cli {
namespace {

struct WebArgs {
  int port = 8080;
  std::string host = "127.0.0.1";
  bool allow_remote = false;
};

/// Largest request body the API reads: 1 MiB (an uploaded config.json is a few KB).
constexpr size_t kMaxBody = size_t{1} << 20;

bool is_loopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

void reply(httplib::Response& res, const web::ApiReply& r) {
  res.status = r.status;
  res.set_content(r.body.dump(), "application/json");
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
  httplib::Server server;
  server.set_payload_max_length(kMaxBody);
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
    if (res.status == 413) {
      reply(res, web::api_error(413, "body", fmt::format("larger than {} bytes (1 MiB)", kMaxBody)));
    } else if (res.status == 404) {
      reply(res, web::api_error(404, "path", fmt::format("no page or endpoint at '{}'", req.path.substr(0, 200))));
    } else {
      reply(res, web::api_error(res.status, "request", fmt::format("HTTP {}", res.status)));
    }
  });
  // Every request is matched here: an endpoint, an embedded file, or a 404. Paths are
  // looked up, never joined to a directory, so "../" and its encodings reach nothing.
  auto route = [](const httplib::Request& req, httplib::Response& res) {
    if (const web::ApiEndpoint* e = web::find_endpoint(req.path)) {
      const bool get = req.method == "GET";
      if (e->get != get) {
        res.set_header("Allow", e->get ? "GET" : "POST");
        reply(res, web::api_error(405, "method", fmt::format("{} takes {}, not {}", e->path, e->get ? "GET" : "POST", req.method)));
        return;
      }
      if (get && !req.params.empty()) {
        reply(res, web::api_error(400, req.params.begin()->first.substr(0, 60), "unknown query parameter for " + e->path));
        return;
      }
      reply(res, web::call_api(*e, req.body));
      return;
    }
    if (req.method == "GET") {
      if (const web::WebAsset* f = web::find_asset(req.path)) {
        res.set_header("Cache-Control", "no-cache");
        res.set_content(std::string(f->body), std::string(f->content_type).c_str());
        return;
      }
    }
    reply(res, web::api_error(404, "path", fmt::format("no page or endpoint at '{}'", req.path.substr(0, 200))));
  };
  server.Get(".*", route);
  server.Post(".*", route);
  int port = a.port;
  if (port == 0) {
    port = server.bind_to_any_port(a.host);
    if (port < 0) throw InputError("--host", fmt::format("cannot listen on {}", a.host));
  } else if (!server.bind_to_port(a.host, port)) {
    throw InputError("--port", fmt::format("cannot listen on {}:{} (in use? --port 0 picks a free one)", a.host, port));
  }
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
  cmd->add_flag("--allow-remote", a.allow_remote, "Allow --host other than loopback (the server has no authentication)");
  cmd->callback([&run] { run = [] { run_web(a); }; });
}

}  // namespace chalk::cli
