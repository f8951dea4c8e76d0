// Launch commands of vLLM, SGLang and TensorRT-LLM for a planned deployment (plan.h).
// Flag names as the engines document them: vLLM `vllm serve` engine arguments; SGLang
// server arguments (python/sglang/srt/server_args.py); TensorRT-LLM `trtllm-serve`.
#include <string>

#include "chalk/sim/plan.h"

namespace chalk::sim {
namespace {

struct Degrees {
  int64_t chips = 1, tp = 1, dp = 1, ep = 1;
  int64_t tp_ffn = 1;  ///< dense FFN's tensor-parallel degree
  bool moe = false;
  bool two_batches = false;  ///< two micro-batches overlap the expert all-to-all
};

Degrees degrees(int64_t chips, const ParallelLayout& l, bool moe) {
  Degrees d;
  d.chips = chips;
  d.tp = l.tp_attention > 0 ? l.tp_attention : chips;
  d.dp = chips / d.tp;
  d.ep = l.ep > 0 ? l.ep : 1;
  d.tp_ffn = l.tp_ffn > 0 ? l.tp_ffn : chips;
  d.moe = moe;
  d.two_batches = l.overlap_micro_batches;
  return d;
}

/// Why an engine's flags cannot state the layout simulated, or "" when they can. Shared:
/// a dense model's data-parallel attention groups under one FFN split over all chips
/// (attention TP t x g, FFN TP r): every engine's data parallelism of a dense model is
/// independent replicas, each with its own FFN. Per engine (`engine`): vLLM's
/// --enable-expert-parallel makes EP = TP x DP, so experts over fewer chips than the
/// replica (EP e x TP r/e) have no flag; TensorRT-LLM's enable_attention_dp is attention
/// TP1 over all tp_size ranks, so attention TP t x r/t with 1 < t < r has none; two
/// micro-batches overlapping the all-to-all are vLLM's --enable-dbo and SGLang's
/// --enable-two-batch-overlap, and trtllm-serve has no flag for them.
std::string cannot(const std::string& engine, const Degrees& d) {
  if (!d.moe && d.dp > 1) {
    return "# " + engine + " cannot run this layout: attention TP" + std::to_string(d.tp) + " x " + std::to_string(d.dp) + " under one FFN TP" +
           std::to_string(d.tp_ffn) + " (its data parallelism of a dense model is independent replicas)";
  }
  if (engine == "vLLM" && d.moe && d.ep > 1 && d.ep < d.chips) {
    return "# vLLM cannot run this layout: EP" + std::to_string(d.ep) + " over " + std::to_string(d.chips) +
           " chips (--enable-expert-parallel spreads experts over all TP x DP ranks)";
  }
  if (engine == "TensorRT-LLM" && d.two_batches) {
    return "# TensorRT-LLM cannot run this layout: two micro-batches overlapping the expert all-to-all (trtllm-serve has no such flag)";
  }
  if (engine == "TensorRT-LLM" && d.moe && d.tp > 1 && d.dp > 1) {
    return "# TensorRT-LLM cannot run this layout: attention TP" + std::to_string(d.tp) + " x " + std::to_string(d.dp) +
           " (enable_attention_dp runs attention TP1 on every rank)";
  }
  return "";
}

/// vLLM and SGLang take KV as tokens arrive: a plan simulated with it reserved to
/// completion (TensorRT-LLM's default) has no flag there, and the line says so.
std::string no_reservation(const std::string& engine, const PlanCandidate& c) {
  return c.reserve_to_completion ? "  # simulated with KV reserved to completion at admission, which " + engine + " has no flag for" : "";
}

std::string replicas(int64_t k) { return k > 1 ? "  # x" + std::to_string(k) + " replicas behind a load balancer" : ""; }

std::string vllm(const std::string& model, const Degrees& d, const PlanCandidate& c, bool moe, const std::string& role, int64_t k) {
  if (const std::string no = cannot("vLLM", d); !no.empty()) return no;
  std::string s = "vllm serve " + model + " --tensor-parallel-size " + std::to_string(d.tp);
  if (d.dp > 1) s += " --data-parallel-size " + std::to_string(d.dp);
  if (moe && d.ep > 1) s += " --enable-expert-parallel";
  if (d.two_batches) s += " --enable-dbo";  // dual batch overlap
  s += " --max-num-seqs " + std::to_string(c.max_sequences) + " --max-num-batched-tokens " + std::to_string(c.max_batched_tokens) +
       " --block-size 16 --enable-chunked-prefill";
  if (!role.empty()) s += " --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'";
  return s + (role.empty() ? replicas(k) : "  # " + role + " pool, x" + std::to_string(k)) + no_reservation("vLLM", c);
}

std::string sglang(const std::string& model, const Degrees& d, const PlanCandidate& c, bool moe, const std::string& role, int64_t k) {
  if (const std::string no = cannot("SGLang", d); !no.empty()) return no;
  std::string s = "python -m sglang.launch_server --model-path " + model + " --tp " + std::to_string(d.chips);
  if (d.dp > 1) s += " --dp " + std::to_string(d.dp) + " --enable-dp-attention";
  if (moe && d.ep > 1) s += " --ep-size " + std::to_string(d.ep);
  if (d.two_batches) s += " --enable-two-batch-overlap";
  s += " --chunked-prefill-size " + std::to_string(c.max_batched_tokens) + " --max-running-requests " + std::to_string(c.max_sequences);
  if (!role.empty()) s += " --disaggregation-mode " + role;
  return s + (role.empty() ? replicas(k) : "  # " + role + " pool, x" + std::to_string(k)) + no_reservation("SGLang", c);
}

std::string trtllm(const std::string& model, const Degrees& d, const PlanCandidate& c, bool moe, const std::string& role, int64_t k) {
  if (const std::string no = cannot("TensorRT-LLM", d); !no.empty()) return no;
  std::string s = "trtllm-serve " + model + " --tp_size " + std::to_string(d.chips);
  if (moe && d.ep > 1) s += " --ep_size " + std::to_string(d.ep);
  s += " --max_batch_size " + std::to_string(c.max_sequences) + " --max_num_tokens " + std::to_string(c.max_batched_tokens);
  // trtllm-serve's capacity scheduler defaults to GUARANTEED_NO_EVICT (KV reserved to
  // completion); a plan simulated with KV on demand states MAX_UTILIZATION.
  std::string extra;
  if (d.dp > 1) extra = "enable_attention_dp: true";
  if (!c.reserve_to_completion) extra += std::string(extra.empty() ? "" : ", ") + "scheduler_config: {capacity_scheduler_policy: MAX_UTILIZATION}";
  if (!extra.empty()) s += "  # with " + extra + " in --extra_llm_api_options";
  const std::string tail = role.empty() ? replicas(k) : "  # " + std::string(role == "prefill" ? "context" : "generation") +
                                                          " server, x" + std::to_string(k) + " (joined by trtllm-serve disaggregated -c)";
  return s + tail;
}

}  // namespace

LaunchSettings launch_settings(const PlanCandidate& c, const std::string& hf_name, bool moe) {
  LaunchSettings l;
  const Degrees a = degrees(c.replica_chips, c.parallel, moe);
  if (!c.disaggregated) {
    l.vllm = vllm(hf_name, a, c, moe, "", c.replicas);
    l.sglang = sglang(hf_name, a, c, moe, "", c.replicas);
    l.trtllm = trtllm(hf_name, a, c, moe, "", c.replicas);
    return l;
  }
  const Degrees b = degrees(c.decode_replica_chips, c.decode_parallel, moe);
  l.vllm = vllm(hf_name, a, c, moe, "prefill", c.replicas) + "\n" + vllm(hf_name, b, c, moe, "decode", c.decode_replicas);
  l.sglang = sglang(hf_name, a, c, moe, "prefill", c.replicas) + "\n" + sglang(hf_name, b, c, moe, "decode", c.decode_replicas);
  l.trtllm = trtllm(hf_name, a, c, moe, "prefill", c.replicas) + "\n" + trtllm(hf_name, b, c, moe, "decode", c.decode_replicas);
  return l;
}

std::string engine_layout_problem(std::string_view engine, int64_t chips, const ParallelLayout& layout, bool moe) {
  const std::string name = engine == "vllm" ? "vLLM" : engine == "sglang" ? "SGLang" : engine == "trtllm" ? "TensorRT-LLM" : "";
  if (name.empty()) return "";
  const std::string no = cannot(name, degrees(chips, layout, moe));
  return no.rfind("# ", 0) == 0 ? no.substr(2) : no;
}

}  // namespace chalk::sim
