// vLLM's launch files (launch.h): `vllm serve` per replica and, disaggregated, the NIXL
// proxy of vLLM's NixlConnector guide. Flag names: tests/data/engine-args/vllm.txt.
#include <string>

#include "launch_internal.h"

namespace chalk::sim::launch_detail {
namespace {

/// vLLM's --kv-cache-dtype for a simulated KV format, or "" when it has none (choices
/// auto, fp8, fp8_e5m2, fp8_e4m3; auto is the model's 16-bit dtype).
std::string kv_dtype(DType kv) {
  if (kv == DType::bf16 || kv == DType::fp16) return "auto";
  if (kv == DType::fp8) return "fp8";
  return "";
}

constexpr int64_t kPrefillPort = 8100, kDecodePort = 8200;

std::string serve(const PlanCandidate& c, const LaunchTarget& t, const Pool& p) {
  const WeightPlan w = weight_plan(t, true);
  Script s;
  s.comments = header(c, t, "vLLM", "vllm", kVllmSource, p);
  s.comments.push_back("Give each replica its own " + std::to_string(p.d.chips) + " GPUs (CUDA_VISIBLE_DEVICES) and its own PORT" +
                       (p.role.empty() ? (p.replicas > 1 ? ", behind a load balancer." : ".") : " (proxy.sh lists them)."));
  if (c.reserve_to_completion) {
    s.comments.push_back("Simulated with KV reserved to completion at admission; vLLM takes KV blocks on demand and has no flag for it.");
  }
  s.vars.push_back(model_var(t, w, "vLLM", "quantizes online only to fp8, from a 16-bit checkpoint"));
  const int64_t port = p.role.empty() ? 8000 : p.role == "prefill" ? kPrefillPort : kDecodePort;
  s.vars.push_back("PORT=\"${PORT:-" + std::to_string(port) + "}\"");
  s.command = {"vllm serve \"$MODEL\"", "--host 0.0.0.0", "--port \"$PORT\"", "--tensor-parallel-size " + std::to_string(p.d.tp)};
  if (p.d.dp > 1) s.command.push_back("--data-parallel-size " + std::to_string(p.d.dp));
  if (t.moe && p.d.ep > 1) s.command.push_back("--enable-expert-parallel");
  if (p.d.two_batches) s.command.push_back("--enable-dbo");  // dual batch overlap
  if (w == WeightPlan::online_fp8) s.command.push_back("--quantization fp8");
  s.command.push_back("--kv-cache-dtype " + kv_dtype(t.kv));
  s.command.push_back("--gpu-memory-utilization " + fraction(1.0 - t.memory_reserve_fraction));
  s.command.push_back("--max-num-seqs " + std::to_string(c.max_sequences));
  s.command.push_back("--max-num-batched-tokens " + std::to_string(c.max_batched_tokens));
  if (t.policy.name == "vllm") s.command.push_back("--block-size " + std::to_string(t.policy.block_size));
  s.command.push_back(t.policy.chunked_prefill ? "--enable-chunked-prefill" : "--no-enable-chunked-prefill");
  if (t.max_model_len > 0) s.command.push_back("--max-model-len " + std::to_string(t.max_model_len));
  if (!p.role.empty()) s.command.push_back("--kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'");
  return render(s);
}

std::string list(int64_t n, const std::string& word, int64_t first_port, bool ports) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) out += (i ? " " : "") + (ports ? std::to_string(first_port + i) : word);
  return out;
}

std::string proxy(const PlanCandidate& c, const LaunchTarget& t) {
  Script s;
  s.comments = {"vLLM disaggregation proxy for `chalk plan`: " + t.model_name + " on " + t.system_name + ", " + std::to_string(c.replicas) +
                    " prefill and " + std::to_string(c.decode_replicas) + " decode replicas.",
                "It sends each request to a prefill server (prefill.sh), then streams the decode server's answer (decode.sh),",
                "the KV cache moving between them by NixlConnector. The proxy is the one vLLM's NixlConnector guide runs:",
                "tests/v1/kv_connector/nixl_integration/toy_proxy_server.py of a vLLM source checkout (VLLM_SRC).",
                "PREFILL_HOSTS/PREFILL_PORTS and DECODE_HOSTS/DECODE_PORTS: one entry per replica, where each was started.",
                std::string("Flags checked against ") + kVllmSource + "."};
  s.vars = {"VLLM_SRC=\"${VLLM_SRC:?set VLLM_SRC to a vLLM source checkout: the proxy is its tests/v1/kv_connector/nixl_integration/toy_proxy_server.py}\"",
            "PORT=\"${PORT:-8000}\"",
            "PREFILL_HOSTS=\"${PREFILL_HOSTS:-" + list(c.replicas, "localhost", 0, false) + "}\"",
            "PREFILL_PORTS=\"${PREFILL_PORTS:-" + list(c.replicas, "", kPrefillPort, true) + "}\"",
            "DECODE_HOSTS=\"${DECODE_HOSTS:-" + list(c.decode_replicas, "localhost", 0, false) + "}\"",
            "DECODE_PORTS=\"${DECODE_PORTS:-" + list(c.decode_replicas, "", kDecodePort, true) + "}\""};
  s.command = {"python3 \"$VLLM_SRC/tests/v1/kv_connector/nixl_integration/toy_proxy_server.py\"",
               "--host 0.0.0.0",
               "--port \"$PORT\"",
               "--prefiller-hosts $PREFILL_HOSTS",
               "--prefiller-ports $PREFILL_PORTS",
               "--decoder-hosts $DECODE_HOSTS",
               "--decoder-ports $DECODE_PORTS"};
  return render(s);
}

}  // namespace

EngineLaunch vllm_launch(const PlanCandidate& c, const LaunchTarget& t) {
  EngineLaunch e;
  e.engine = "vllm";
  e.checked_at = kVllmSource;
  const auto pools = pools_of(c, t.moe);
  for (const auto& p : pools) {
    if (e.problem.empty()) e.problem = layout_problem("vLLM", p.d);
  }
  if (e.problem.empty() && kv_dtype(t.kv).empty()) {
    e.problem = "vLLM has no " + std::string(to_string(t.kv)) + " KV cache (--kv-cache-dtype takes auto, fp8, fp8_e5m2, fp8_e4m3)";
  }
  if (!e.problem.empty()) return e;
  for (const auto& p : pools) e.files.push_back({"vllm/" + (p.role.empty() ? std::string("serve") : p.role) + ".sh", serve(c, t, p), true});
  if (c.disaggregated) e.files.push_back({"vllm/proxy.sh", proxy(c, t), true});
  return e;
}

}  // namespace chalk::sim::launch_detail
