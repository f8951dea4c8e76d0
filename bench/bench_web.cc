// Speed of `chalk web` (issue 18). Targets: a decode-sweep API answer (POST
// /api/serving/sweep, batch 1..65,536 in powers of two, its JSON serialised) within 5 ms
// at the server; 1,000 requests/s on loopback from one core for the decode endpoint.
// The first two time the handler alone (call_api: parse the body, run the command, build
// the JSON, dump it): one core's requests/s is 1 / that time. The third is the whole HTTP
// round trip on loopback, a keep-alive client against the server on another thread;
// tests/web/load.sh measures the rate with wrk against `chalk web` pinned to one core.
#include <chrono>
#include <thread>

#include <benchmark/benchmark.h>
#include <httplib.h>

#include "web_api.h"

namespace {

using chalk::cli::web::call_api;
using chalk::cli::web::find_endpoint;

void api(benchmark::State& state, const char* path, const char* body) {
  const auto* e = find_endpoint(path);
  size_t bytes = 0;
  for (auto _ : state) {
    const auto r = call_api(*e, body);
    if (r.status != 200) state.SkipWithError(r.body.dump().c_str());
    const std::string text = r.body.dump();
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["response_bytes"] = static_cast<double>(bytes);
  state.counters["req_per_s_one_core"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void http_decode(benchmark::State& state) {
  httplib::Server server;
  server.set_tcp_nodelay(true);  // as `chalk web` (cmd_web.cc)
  server.Post("/api/decode", [](const httplib::Request& req, httplib::Response& res) {
    const auto r = call_api(*find_endpoint("/api/decode"), req.body);
    res.status = r.status;
    res.set_content(r.body.dump(), "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  const std::string body = R"({"model":"llama-3.1-70b","hardware":"h100-sxm","batch":64,"context":4096})";
  for (auto _ : state) {
    auto res = client.Post("/api/decode", body, "application/json");
    if (!res || res->status != 200) state.SkipWithError("decode request failed");
  }
  state.counters["req_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  server.stop();
  t.join();
}

}  // namespace

BENCHMARK_CAPTURE(api, decode_sweep_llama_3_1_70b_h100, "/api/serving/sweep",
                  R"({"model":"llama-3.1-70b","hardware":"h100-sxm","batch":"1:65536","context":4096})")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(api, decode_sweep_deepseek_v3_gb200, "/api/serving/sweep",
                  R"({"model":"deepseek-v3","hardware":"gb200-nvl72","batch":"1:65536","context":4096})")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(api, decode_llama_3_1_70b_h100, "/api/decode", R"({"model":"llama-3.1-70b","hardware":"h100-sxm","batch":64,"context":4096})")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(http_decode)->Unit(benchmark::kMicrosecond)->UseRealTime();

BENCHMARK_MAIN();
