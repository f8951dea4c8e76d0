// TensorRT-LLM's launch files (launch.h): `trtllm-serve` per replica with its
// --extra_llm_api_options YAML and, disaggregated, `trtllm-serve disaggregated -c` over the
// context and generation servers. Names: tests/data/engine-args/trtllm.txt.
#include <algorithm>
#include <string>

#include "launch_internal.h"

namespace chalk::sim::launch_detail {
namespace {

/// kv_cache_config.dtype for a simulated KV format, or "" when none is known here (auto
/// follows the checkpoint, 16-bit for every built-in model; fp8).
std::string trtllm_kv_dtype(DType kv) {
  if (kv == DType::bf16 || kv == DType::fp16) return "auto";
  if (kv == DType::fp8) return "fp8";
  return "";
}

constexpr int64_t kContextPort = 8100, kGenerationPort = 8200;

std::string yaml_name(const Pool& p) { return p.role.empty() ? "extra_llm_api_options.yaml" : p.role + ".yaml"; }

std::string options(const PlanCandidate& c, const LaunchTarget& t, const Pool& p) {
  std::string y = comment("TensorRT-LLM LLM API options for `chalk plan`'s " + (p.role.empty() ? std::string("servers") : p.role + " servers") +
                          " (" + t.model_name + " on " + t.system_name + "): trtllm-serve --extra_llm_api_options " + yaml_name(p) + " (" +
                          (p.role.empty() ? std::string("serve") : p.role) + ".sh passes it). Keys checked against chalk's tests/data/engine-args/trtllm.txt.");
  if (p.d.dp > 1) y += "enable_attention_dp: true\n";
  if (t.moe && p.d.ep > 1 && t.eplb) {
    y += "# EPLB simulated (--eplb yes): TensorRT-LLM's MoE load balancer (moe_config.load_balancer) takes a file of expert\n"
         "# statistics gathered from your traffic, which chalk does not write: without it the experts sit in order\n";
  }
  y += "kv_cache_config:\n  dtype: " + trtllm_kv_dtype(t.kv) + "\n";
  y += "  # KV share of what the weights leave on a chip: ((1 - " + fraction(t.memory_reserve_fraction) + ") HBM - weights) / (HBM - weights)\n";
  y += "  free_gpu_memory_fraction: " + fraction(trtllm_kv_fraction(t, p.weight_bytes_per_chip)) + "\n";
  // The simulated KV block; TensorRT-LLM's must be a power of two greater than 1 (its KV cache
  // guide, docs/source/features/kvcache.md), else its default (32) runs.
  const int64_t b = t.policy.block_size;
  if (b > 1 && (b & (b - 1)) == 0) {
    y += "  tokens_per_block: " + std::to_string(b) + "\n";
  } else {
    y += "  # " + std::to_string(b) + "-token KV blocks simulated; tokens_per_block takes powers of two > 1: its default 32 runs\n";
  }
  y += "scheduler_config:\n  # KV " + std::string(c.reserve_to_completion ? "reserved to completion at admission" : "taken on demand") +
       ", as simulated\n  capacity_scheduler_policy: " + (c.reserve_to_completion ? "GUARANTEED_NO_EVICT" : "MAX_UTILIZATION") + "\n";
  if (!p.role.empty()) y += "cache_transceiver_config:\n  backend: DEFAULT\n";
  if (t.enforce_eager) y += "# simulated without CUDA graphs (--enforce-eager)\ncuda_graph_config: null\n";
  y += trtllm_speculative_yaml(t);  // the drafts simulated
  return y;
}

std::string trtllm_serve(const PlanCandidate& c, const LaunchTarget& t, const Pool& p) {
  const WeightPlan w = weight_plan(t, false);
  Script s;
  s.comments = header(c, t, "TensorRT-LLM", "trtllm", kTrtllmSource, p, p.d.dp);
  s.comments.push_back("Give each replica " + replica_gpus(t, p.d.chips) + (p.role.empty() && p.replicas > 1 ? ", behind a load balancer." : "."));
  if (const std::string note = replica_note(p, p.role.empty() ? "" : "disagg.yaml"); !note.empty()) s.comments.push_back(note);
  if (const std::string note = model_note(t, w, "trtllm-serve", "reads the quantization from the checkpoint"); !note.empty()) s.comments.push_back(note);
  if (const int64_t hosts = replica_hosts(t, p.d.chips); hosts > 1) {
    s.comments.push_back("A replica spans " + std::to_string(hosts) + " hosts of " + count(t.chips_per_host, "GPU") +
                         ": start it under MPI with one rank per GPU over those hosts (TensorRT-LLM's multi-node serving).");
  }
  s.vars.push_back(model_var(t, w));
  // Only PORT follows REPLICA: of CacheTransceiverConfig's keys chalk writes only backend, and
  // none sets a port (llm_args.py; tests/data/engine-args/trtllm.txt), so no other port is fixed.
  s.vars.push_back(replica_var(p));
  s.vars.push_back(replica_port_var("PORT", p.role.empty() ? 8000 : p.role == "prefill" ? kContextPort : kGenerationPort));
  s.command = {"trtllm-serve \"$MODEL\"", "--host 0.0.0.0", "--port \"$PORT\"", "--backend pytorch", "--tp_size " + std::to_string(p.d.stage_chips())};
  if (p.d.pp > 1) s.command.push_back("--pp_size " + std::to_string(p.d.pp));  // pipeline stages (PlanCandidate::pp)
  if (t.moe && p.d.ep > 1) s.command.push_back("--ep_size " + std::to_string(p.d.ep));
  // Under enable_attention_dp TensorRT-LLM applies both caps per attention-DP rank (its
  // pyexecutor/_util.py: capacity = max_batch_size x pp_size, no DP divisor; ai-dynamo/dynamo
  // PR #11982: "aggregate concurrency is max_batch_size x dp_size"); chalk's are per replica,
  // so each rank gets its share, as vLLM's files give theirs (review 7 H1: 8x the simulated).
  const int64_t ranks = std::max<int64_t>(1, p.d.dp);
  if (ranks > 1) {
    s.comments.push_back("Under enable_attention_dp TensorRT-LLM caps each of the " + std::to_string(ranks) +
                         " attention-DP ranks: the simulated replica's cap and budget over " + std::to_string(ranks) + ".");
  }
  s.command.push_back("--max_batch_size " + std::to_string((c.max_sequences + ranks - 1) / ranks));
  s.command.push_back("--max_num_tokens " + std::to_string((c.max_batched_tokens + ranks - 1) / ranks));
  if (t.max_model_len > 0) s.command.push_back("--max_seq_len " + std::to_string(t.max_model_len));
  if (t.policy.chunked_prefill) s.command.push_back("--enable_chunked_prefill");
  if (t.trust_remote_code) s.command.push_back("--trust_remote_code");  // the config's auto_map names the repo's code
  s.command.push_back("--extra_llm_api_options \"$(dirname \"$0\")/" + yaml_name(p) + "\"");
  return render(s);
}

std::string urls(int64_t n, int64_t port) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) out += "    - \"localhost:" + std::to_string(port + i) + "\"\n";
  return out;
}

std::string disagg(const PlanCandidate& c, const LaunchTarget& t) {
  return comment("trtllm-serve disaggregated -c disagg.yaml (router.sh) for `chalk plan`: " + t.model_name + " on " + t.system_name +
                 ". Set each url to where that context (prefill.sh) or generation (decode.sh) server runs.") +
         "hostname: 0.0.0.0\nport: 8000\nbackend: pytorch\ncontext_servers:\n  num_instances: " +
         std::to_string(c.replicas) + "\n  urls:\n" + urls(c.replicas, kContextPort) +
         "generation_servers:\n  num_instances: " + std::to_string(c.decode_replicas) + "\n  urls:\n" + urls(c.decode_replicas, kGenerationPort);
}

std::string trtllm_router(const PlanCandidate& c, const LaunchTarget& t) {
  Script s;
  s.comments = {"TensorRT-LLM disaggregated server for `chalk plan`: " + t.model_name + " on " + t.system_name + ", " +
                    count(c.replicas, "context server") + " and " + count(c.decode_replicas, "generation server") + " (disagg.yaml).",
                std::string("Flags checked against ") + kTrtllmSource + "."};
  s.command = {"trtllm-serve disaggregated", "-c \"$(dirname \"$0\")/disagg.yaml\""};
  return render(s);
}

}  // namespace

EngineLaunch trtllm_launch(const PlanCandidate& c, const LaunchTarget& t) {
  const auto pools = pools_of(c, t.moe);
  EngineLaunch e = start_launch("trtllm", "TensorRT-LLM", kTrtllmSource, pools);
  if (e.problem.empty() && trtllm_kv_dtype(t.kv).empty()) {
    e.problem = "TensorRT-LLM: no " + std::string(to_string(t.kv)) + " KV cache among the kv_cache_config.dtype values checked (auto, fp8)";
  }
  if (e.problem.empty()) e.problem = trtllm_speculation_problem(t);
  if (e.problem.empty() && t.lora_adapters > 0) {
    e.problem = "TensorRT-LLM: the plan serves LoRA adapters, and chalk has not checked its LLM API's lora_config keys (tests/data/engine-args/trtllm.txt)";
  }
  if (!e.problem.empty()) return e;
  for (const auto& p : pools) {
    e.files.push_back({script_path("trtllm", p), trtllm_serve(c, t, p), true});
    e.files.push_back({"trtllm/" + yaml_name(p), options(c, t, p), false});
  }
  if (c.disaggregated) {
    e.files.push_back({"trtllm/disagg.yaml", disagg(c, t), false});
    e.files.push_back({"trtllm/router.sh", trtllm_router(c, t), true});
  }
  return e;
}

}  // namespace chalk::sim::launch_detail
