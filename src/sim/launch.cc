// Launch commands of vLLM, SGLang and TensorRT-LLM for a planned deployment (plan.h).
// Flag names as the engines document them: vLLM `vllm serve` engine arguments; SGLang
// server arguments (python/sglang/srt/server_args.py); TensorRT-LLM `trtllm-serve`.
#include <string>

#include "chalk/sim/plan.h"

namespace chalk::sim {
namespace {

struct Degrees {
  int64_t chips = 1, tp = 1, dp = 1, ep = 1;
};

Degrees degrees(int64_t chips, const ParallelLayout& l) {
  Degrees d;
  d.chips = chips;
  d.tp = l.tp_attention > 0 ? l.tp_attention : chips;
  d.dp = chips / d.tp;
  d.ep = l.ep > 0 ? l.ep : 1;
  return d;
}

std::string replicas(int64_t k) { return k > 1 ? "  # x" + std::to_string(k) + " replicas behind a load balancer" : ""; }

std::string vllm(const std::string& model, const Degrees& d, const PlanCandidate& c, bool moe, const std::string& role, int64_t k) {
  std::string s = "vllm serve " + model + " --tensor-parallel-size " + std::to_string(d.tp);
  if (d.dp > 1) s += " --data-parallel-size " + std::to_string(d.dp);
  if (moe && d.ep > 1) s += " --enable-expert-parallel";
  s += " --max-num-seqs " + std::to_string(c.max_sequences) + " --max-num-batched-tokens " + std::to_string(c.max_batched_tokens) +
       " --block-size 16 --enable-chunked-prefill";
  if (!role.empty()) s += " --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'";
  return s + (role.empty() ? replicas(k) : "  # " + role + " pool, x" + std::to_string(k));
}

std::string sglang(const std::string& model, const Degrees& d, const PlanCandidate& c, bool moe, const std::string& role, int64_t k) {
  std::string s = "python -m sglang.launch_server --model-path " + model + " --tp " + std::to_string(d.chips);
  if (d.dp > 1) s += " --dp " + std::to_string(d.dp) + " --enable-dp-attention";
  if (moe && d.ep > 1) s += " --ep-size " + std::to_string(d.ep);
  s += " --chunked-prefill-size " + std::to_string(c.max_batched_tokens) + " --max-running-requests " + std::to_string(c.max_sequences);
  if (!role.empty()) s += " --disaggregation-mode " + role;
  return s + (role.empty() ? replicas(k) : "  # " + role + " pool, x" + std::to_string(k));
}

std::string trtllm(const std::string& model, const Degrees& d, const PlanCandidate& c, bool moe, const std::string& role, int64_t k) {
  std::string s = "trtllm-serve " + model + " --tp_size " + std::to_string(d.chips);
  if (moe && d.ep > 1) s += " --ep_size " + std::to_string(d.ep);
  s += " --max_batch_size " + std::to_string(c.max_sequences) + " --max_num_tokens " + std::to_string(c.max_batched_tokens);
  if (d.dp > 1) s += "  # with enable_attention_dp: true in --extra_llm_api_options";
  const std::string tail = role.empty() ? replicas(k) : "  # " + std::string(role == "prefill" ? "context" : "generation") +
                                                          " server, x" + std::to_string(k) + " (joined by trtllm-serve disaggregated -c)";
  return s + tail;
}

}  // namespace

LaunchSettings launch_settings(const PlanCandidate& c, const std::string& hf_name, bool moe) {
  LaunchSettings l;
  const Degrees a = degrees(c.replica_chips, c.parallel);
  if (!c.disaggregated) {
    l.vllm = vllm(hf_name, a, c, moe, "", c.replicas);
    l.sglang = sglang(hf_name, a, c, moe, "", c.replicas);
    l.trtllm = trtllm(hf_name, a, c, moe, "", c.replicas);
    return l;
  }
  const Degrees b = degrees(c.decode_replica_chips, c.decode_parallel);
  l.vllm = vllm(hf_name, a, c, moe, "prefill", c.replicas) + "\n" + vllm(hf_name, b, c, moe, "decode", c.decode_replicas);
  l.sglang = sglang(hf_name, a, c, moe, "prefill", c.replicas) + "\n" + sglang(hf_name, b, c, moe, "decode", c.decode_replicas);
  l.trtllm = trtllm(hf_name, a, c, moe, "prefill", c.replicas) + "\n" + trtllm(hf_name, b, c, moe, "decode", c.decode_replicas);
  return l;
}

}  // namespace chalk::sim
