// vLLM's launch files (launch.h): `vllm serve` per replica and, disaggregated, the NIXL
// proxy of vLLM's NixlConnector guide; and the same deployment as a Dynamo
// DynamoGraphDeployment for Kubernetes. Names: tests/data/engine-args/vllm.txt.
#include <algorithm>
#include <string>
#include <vector>

#include "launch_internal.h"

namespace chalk::sim::launch_detail {
namespace {

/// vLLM's --kv-cache-dtype for a simulated KV format, or "" when it has none (choices
/// auto, fp8, fp8_e5m2, fp8_e4m3; auto is the model's 16-bit dtype).
std::string vllm_kv_dtype(DType kv) {
  if (kv == DType::bf16 || kv == DType::fp16) return "auto";
  if (kv == DType::fp8) return "fp8";
  return "";
}

constexpr int64_t kPrefillPort = 8100, kVllmDecodePort = 8200;
constexpr int64_t kNixlSideChannelPort = 5600;  // VLLM_NIXL_SIDE_CHANNEL_PORT's default (vLLM's NixlConnector guide)

/// The --block-size values vLLM runs on GPUs: its choices (BlockSize = Literal[1, 8, 16, 32,
/// 64, 128], vllm/config/cache.py of the v0.11 line; tests/data/engine-args/vllm.txt) that
/// its CUDA and ROCm attention backends accept, multiples of 16 (FlashAttention's
/// get_kv_cache_shape raises "Block size must be a multiple of 16."). SGLang's simulated
/// page of 1 token is therefore not written for vLLM: its default 16 runs.
bool vllm_block_size_ok(int64_t b) { return b == 16 || b == 32 || b == 64 || b == 128; }

/// Whether vLLM dispatches this pool's experts with its all-to-all kernels, the only path
/// --all2all-backend selects: FusedMoEParallelConfig.use_all2all_kernels is `dp_size > 1 and
/// use_ep` (vllm/model_executor/layers/fused_moe/config.py, v0.11.0). With one DP rank (TP +
/// EP) vLLM runs the all-reduce path whatever the backend (review 10 L6).
bool vllm_runs_all2all(const LaunchTarget& t, const Pool& p) { return t.moe && p.d.ep > 1 && p.d.dp > 1; }

/// Whether the pool's files would name a DeepEP backend: the all-to-all path, or micro-batches
/// (--enable-dbo asserts a DeepEP backend).
bool vllm_wants_deepep(const LaunchTarget& t, const Pool& p) { return vllm_runs_all2all(t, p) || (t.moe && p.d.ep > 1 && p.d.two_batches); }

/// How vLLM's files for pool `p` differ from what chalk priced, "" when they do not: the
/// all-to-all path priced, and vLLM's DeepEP not run for the model (deepep_problem), so the
/// default --all2all-backend (allgather_reducescatter) runs.
std::string vllm_differs(const LaunchTarget& t, const Pool& p) {
  if (!vllm_runs_all2all(t, p)) return "";
  const std::string why = deepep_problem("vllm", t);
  if (why.empty()) return "";
  return "chalk priced DeepEP's all-to-all between the " + std::to_string(p.d.dp) + " data-parallel ranks and the experts" +
         (p.role.empty() ? std::string() : " (the " + p.role + " pool)") + ", but " + why +
         "; the files run vLLM's default all-to-all (allgather_reducescatter), so its latencies may differ from the simulated";
}

/// The engine arguments that state the simulated deployment, one "--flag value" a line:
/// layout, weights, KV dtype, memory, cap, budget, chunked prefill, the longest request.
std::vector<std::string> engine_args(const PlanCandidate& c, const LaunchTarget& t, const Pool& p, WeightPlan w) {
  std::vector<std::string> a;
  // Pipeline stages (PlanCandidate::pp): vLLM's own flag, the stages one after another.
  if (p.d.pp > 1) a.push_back("--pipeline-parallel-size " + std::to_string(p.d.pp));
  a.push_back("--tensor-parallel-size " + std::to_string(p.d.tp));
  if (p.d.dp > 1) a.push_back("--data-parallel-size " + std::to_string(p.d.dp));
  if (t.moe && p.d.ep > 1) a.push_back("--enable-expert-parallel");
  if (t.moe && p.d.ep > 1 && t.eplb) {
    a.push_back("--enable-eplb");
    a.push_back("--num-redundant-experts " + std::to_string(p.d.ep));
  }
  if (vllm_wants_deepep(t, p) && deepep_problem("vllm", t).empty()) {
    // The all-to-all kernels chalk's step prices are DeepEP's (ep_kernels.h: normal for a
    // step with prompt chunks, low-latency for a pure decode step). vLLM fixes one family per
    // process (vllm/config/parallel.py, all2all_backend; default allgather_reducescatter, not
    // DeepEP): a prefill pool runs deepep_high_throughput, a decode pool and an aggregated
    // replica deepep_low_latency (its CUDA-graph decode; an aggregated replica's mixed steps
    // then run low-latency kernels where chalk prices normal ones). --enable-dbo needs one of
    // the two: VllmConfig.__post_init__ (vllm/config/vllm.py) asserts "Microbatching currently
    // only supports the deepep_low_latency and deepep_high_throughput all2all backend"
    // (review 8 H3), so with --enable-dbo the flag stays even on one DP rank. Without DP and
    // micro-batches vLLM ignores it (vllm_runs_all2all), and it is left out (review 10 L6).
    // Only for a model whose DeepEP path vLLM runs (deepep_problem, review 11 H2).
    a.push_back(std::string("--all2all-backend ") + (p.role == "prefill" ? "deepep_high_throughput" : "deepep_low_latency"));
  }
  if (p.d.two_batches) a.push_back("--enable-dbo");  // dual batch overlap
  if (w == WeightPlan::online_fp8) a.push_back("--quantization fp8");
  a.push_back("--kv-cache-dtype " + vllm_kv_dtype(t.kv));
  a.push_back("--gpu-memory-utilization " + fraction(1.0 - t.memory_reserve_fraction));
  // Under data parallelism each vLLM rank is an engine core with its own scheduler and the
  // same scheduler config, so both caps apply per rank (vllm/v1/engine/core.py: one
  // Scheduler per DPEngineCoreProc); chalk's are per replica, so each rank gets its share
  // (review 2026-12-06: the file said dp x the simulated cap and budget). SGLang's
  // --max-running-requests and --chunked-prefill-size are totals it divides by dp_size.
  const int64_t ranks = std::max<int64_t>(1, p.d.dp);
  a.push_back("--max-num-seqs " + std::to_string((c.max_sequences + ranks - 1) / ranks));
  a.push_back("--max-num-batched-tokens " + std::to_string((c.max_batched_tokens + ranks - 1) / ranks));
  if (vllm_block_size_ok(t.policy.block_size)) a.push_back("--block-size " + std::to_string(t.policy.block_size));
  a.push_back(t.policy.chunked_prefill ? "--enable-chunked-prefill" : "--no-enable-chunked-prefill");
  if (t.max_model_len > 0) a.push_back("--max-model-len " + std::to_string(t.max_model_len));
  if (t.enforce_eager) a.push_back("--enforce-eager");  // simulated without CUDA graphs
  if (t.trust_remote_code) a.push_back("--trust-remote-code");  // the config's auto_map names the repo's code
  if (const std::string spec = vllm_speculative_config(t); !spec.empty()) a.push_back(spec);  // the drafts simulated
  return a;
}

/// vLLM's LoRA arguments for a plan with adapters (LaunchTarget::lora_adapters; none
/// without): the HBM slots simulated (--max-loras, the candidate's PlanLora::max_loras),
/// their rank, and every adapter kept in host memory (--max-cpu-loras N: chalk loads a miss
/// from host memory, never from disk; vllm/config/lora.py requires max_cpu_loras >=
/// max_loras, and N >= max_loras by max_loras_candidates). The adapters themselves are the
/// operator's: --lora-modules takes "name=path" words (vllm/entrypoints/openai/cli_args.py),
/// left unquoted so that LORA_MODULES splits into them.
std::vector<std::string> vllm_lora_args(const PlanCandidate& c, const LaunchTarget& t) {
  if (t.lora_adapters < 1) return {};
  const int64_t slots = c.lora ? c.lora->max_loras : 1;
  return {"--enable-lora", "--max-loras " + std::to_string(slots), "--max-lora-rank " + std::to_string(t.lora_rank),
          "--max-cpu-loras " + std::to_string(std::max(t.lora_adapters, slots)), "--lora-modules $LORA_MODULES"};
}

std::string vllm_serve(const PlanCandidate& c, const LaunchTarget& t, const Pool& p) {
  const WeightPlan w = weight_plan(t, true);
  Script s;
  s.comments = header(c, t, "vLLM", "vllm", kVllmSource, p, p.d.dp);
  s.comments.push_back("Give each replica " + replica_gpus(t, p.d.chips) + (p.role.empty() && p.replicas > 1 ? ", behind a load balancer." : "."));
  if (c.reserve_to_completion) {
    s.comments.push_back("Simulated with KV reserved to completion at admission; vLLM takes KV blocks on demand and has no flag for it.");
  }
  if (!vllm_block_size_ok(t.policy.block_size)) {
    s.comments.push_back("Simulated with " + std::to_string(t.policy.block_size) + "-token KV blocks; vLLM's attention backends take 16, 32, 64 "
                         "or 128 (multiples of 16), so its default (16) runs.");
  }
  if (const std::string note = model_note(t, w, "vLLM", "quantizes online only to fp8, from a 16-bit checkpoint"); !note.empty()) s.comments.push_back(note);
  if (t.moe && p.d.ep > 1 && !vllm_runs_all2all(t, p) && !p.d.two_batches) {
    s.comments.push_back("No --all2all-backend: with one data-parallel rank vLLM runs the experts' all-reduce path, not the all-to-all "
                         "kernels the flag selects (v0.11 FusedMoEParallelConfig.use_all2all_kernels: dp_size > 1 and use_ep).");
  }
  if (const std::string differs = vllm_differs(t, p); !differs.empty()) s.comments.push_back("Not as simulated: " + differs + ".");
  s.vars.push_back(model_var(t, w));
  if (const std::string draft = draft_model_var(t); !draft.empty()) s.vars.push_back(draft);
  if (const std::string spec = vllm_speculative_config_var(t); !spec.empty()) s.vars.push_back(spec);
  const int64_t port = p.role.empty() ? 8000 : p.role == "prefill" ? kPrefillPort : kVllmDecodePort;
  if (const std::string note = replica_note(p, p.role.empty() ? "" : "proxy.sh"); !note.empty()) s.comments.push_back(note);
  s.vars.push_back(replica_var(p));
  s.vars.push_back(replica_port_var("PORT", port));
  if (!p.role.empty()) {
    // NixlConnector's handshake side channel (review 10 H1): vllm/envs.py reads
    // VLLM_NIXL_SIDE_CHANNEL_PORT and VLLM_NIXL_SIDE_CHANNEL_HOST (default "localhost"), and
    // NixlConnectorScheduler listens on port + data_parallel_rank x tensor_parallel_size, its
    // workers on the ports after it: one replica takes up to its chip count of ports from its
    // base. Two replicas on a host with the default base fail to bind, so each replica's base
    // is 5600 (vLLM's default) + its index x its chips, the decode pool's after the prefill
    // pool's. The host is the one the prefill server tells the decode server to connect to.
    const int64_t base = kNixlSideChannelPort + (p.role == "decode" ? c.replicas * c.replica_chips : 0);
    // count(): "the 1 port after it" (review 11 L3: "the 1 ports").
    s.comments.push_back("NixlConnector's side channel listens on VLLM_NIXL_SIDE_CHANNEL_PORT" +
                         (p.d.chips > 1 ? " and the " + count(p.d.chips - 1, "port") + " after it" : std::string()) +
                         ", on VLLM_NIXL_SIDE_CHANNEL_HOST (this host's first address).");
    s.vars.push_back(replica_port_var("VLLM_NIXL_SIDE_CHANNEL_PORT", base, p.d.chips));
    s.vars.push_back("VLLM_NIXL_SIDE_CHANNEL_HOST=\"${VLLM_NIXL_SIDE_CHANNEL_HOST:-$(hostname -I | cut -d' ' -f1)}\"");
    s.vars.push_back("export VLLM_NIXL_SIDE_CHANNEL_PORT VLLM_NIXL_SIDE_CHANNEL_HOST");
  }
  if (t.lora_adapters > 0) {
    s.comments.push_back("Simulated with " + count(t.lora_adapters, "LoRA adapter") + " of rank " + std::to_string(t.lora_rank) +
                         ": set LORA_MODULES to them, name=path each, separated by spaces.");
    s.vars.push_back("LORA_MODULES=\"${LORA_MODULES:?set LORA_MODULES: the " + count(t.lora_adapters, "adapter") + " as name=path, space-separated}\"");
  }
  s.command = {"vllm serve \"$MODEL\"", "--host 0.0.0.0", "--port \"$PORT\""};
  for (const auto& a : engine_args(c, t, p, w)) s.command.push_back(a);
  for (const auto& a : vllm_lora_args(c, t)) s.command.push_back(a);
  if (const int64_t hosts = replica_hosts(t, p.d.chips); hosts > 1) {
    const int64_t rank_chips = p.d.chips / std::max<int64_t>(1, p.d.dp);  // one DP rank's TP x PP
    if (p.d.dp > 1 && rank_chips <= t.chips_per_host && t.chips_per_host % rank_chips == 0) {
      // Data-parallel ranks over several hosts (review 8 H2): vLLM's Ray data-parallel
      // backend places the DP engine cores over the Ray cluster, --data-parallel-size-local a
      // host. Without it vLLM's create_engine_config (vllm/engine/arg_utils.py) sets "local DP
      // size defaults to global DP size", starting every rank on the head's GPUs;
      // --distributed-executor-backend only spreads one engine's TP x PP workers. With the
      // ray backend and no --data-parallel-address it takes the head's IP ("Using host IP %s
      // as ray-based data parallel address").
      const int64_t local = t.chips_per_host / rank_chips;
      s.comments.push_back("A replica spans " + std::to_string(hosts) + " hosts of " + count(t.chips_per_host, "GPU") + ", " +
                           count(local, "data-parallel rank") + " a host: start a Ray cluster over them (ray start --head on one, "
                           "ray start --address on the others) and run this on the head; vLLM's Ray data-parallel backend starts "
                           "the ranks over the cluster.");
      s.command.push_back("--data-parallel-size-local " + std::to_string(local));
      s.command.push_back("--data-parallel-backend ray");
    } else {
      // One engine's TP x PP workers over several hosts (GB200 NVL72: trays of 4 GPUs):
      // vLLM's multi-node serving runs them on a Ray cluster (arg_utils.py:
      // --distributed-executor-backend).
      s.comments.push_back("A replica spans " + std::to_string(hosts) + " hosts of " + count(t.chips_per_host, "GPU") +
                           ": start a Ray cluster over them (ray start --head on one, ray start --address on the others) and run this "
                           "on the head.");
      s.command.push_back("--distributed-executor-backend ray");
    }
  }
  if (!p.role.empty()) s.command.push_back("--kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'");
  return render(s);
}

/// The proxy's arguments for one pool: `flag` then one "${VAR_i:-default}" line per replica.
void per_replica(std::vector<std::string>& command, const std::string& flag, const std::string& var, int64_t n, int64_t port) {
  command.push_back(flag);
  for (int64_t i = 0; i < n; ++i) {
    command.push_back("  \"${" + var + "_" + std::to_string(i) + ":-" + (port > 0 ? std::to_string(port + i) : std::string("localhost")) + "}\"");
  }
}

std::string proxy(const PlanCandidate& c, const LaunchTarget& t) {
  Script s;
  s.comments = {"vLLM disaggregation proxy for `chalk plan`: " + t.model_name + " on " + t.system_name + ", " + count(c.replicas, "prefill replica") +
                    " and " + count(c.decode_replicas, "decode replica") + ".",
                "It sends each request to a prefill server (prefill.sh), then streams the decode server's answer (decode.sh), the KV "
                "cache moving between them by NixlConnector. It is the proxy vLLM's NixlConnector guide runs, "
                "tests/v1/kv_connector/nixl_integration/toy_proxy_server.py of a vLLM source checkout (VLLM_SRC).",
                "PREFILL_HOST_i/PREFILL_PORT_i and DECODE_HOST_i/DECODE_PORT_i: where each replica was started.",
                // The proxy's own argparse, not the engine's (review 7 L1; tests/data/engine-args/vllm.txt's `proxy` lines).
                std::string("Flags checked against ") + kVllmProxySource + "."};
  s.vars = {"VLLM_SRC=\"${VLLM_SRC:?set VLLM_SRC to a vLLM source checkout}\"", "PORT=\"${PORT:-8000}\""};
  s.command = {"python3 \"$VLLM_SRC/tests/v1/kv_connector/nixl_integration/toy_proxy_server.py\"", "--host 0.0.0.0", "--port \"$PORT\""};
  per_replica(s.command, "--prefiller-hosts", "PREFILL_HOST", c.replicas, 0);
  per_replica(s.command, "--prefiller-ports", "PREFILL_PORT", c.replicas, kPrefillPort);
  per_replica(s.command, "--decoder-hosts", "DECODE_HOST", c.decode_replicas, 0);
  per_replica(s.command, "--decoder-ports", "DECODE_PORT", c.decode_replicas, kVllmDecodePort);
  return render(s);
}

/// The Dynamo image of ai-dynamo/dynamo's own vLLM deployment example (deploy/disagg.yaml).
constexpr const char* kDynamoImage = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1";

std::string worker(const PlanCandidate& c, const LaunchTarget& t, const Pool& p, const std::string& name) {
  std::string y = "    " + name + ":\n      envFromSecret: hf-token-secret\n      dynamoNamespace: chalk-plan\n      componentType: worker\n";
  if (!p.role.empty()) y += "      subComponentType: " + p.role + "\n";
  y += "      replicas: " + std::to_string(p.replicas) + "\n      resources:\n        limits:\n          gpu: \"" + std::to_string(p.d.chips) +
       "\"\n      extraPodSpec:\n        mainContainer:\n          image: " + kDynamoImage +
       "\n          workingDir: /workspace/components/backends/vllm\n          command:\n            - python3\n            - -m\n"
       "            - dynamo.vllm\n          args:\n            - --model\n            - \"" + *t.model + "\"\n";
  std::vector<std::string> args = engine_args(c, t, p, weight_plan(t, true));
  if (p.role == "prefill") args.push_back("--is-prefill-worker");
  for (const auto& a : args) {
    const auto space = a.find(' ');
    y += "            - " + a.substr(0, space) + "\n";
    // A value already single-quoted (--speculative-config's JSON) is a YAML single-quoted scalar as it stands.
    const std::string value = space == std::string::npos ? "" : a.substr(space + 1);
    if (space != std::string::npos) y += "            - " + (value.front() == '\'' ? value : "\"" + value + "\"") + "\n";
  }
  return y;
}

/// A DynamoGraphDeployment (Kubernetes) for the deployment, as ai-dynamo/dynamo's
/// components/backends/vllm/deploy/agg.yaml and disagg.yaml write one: a frontend and one
/// worker service per pool running `python3 -m dynamo.vllm` with the engine's arguments (Dynamo
/// sets the NIXL KV transfer itself). One pod per replica on one host, so "" when a replica needs
/// more GPUs than one host has (t.chips_per_host: 4 on a GB200 NVL72 tray, 8 on an HGX board;
/// larger replicas need Dynamo's multinode form), with LoRA adapters (their paths are the
/// operator's, which a manifest cannot leave open) or when the model is not a HF repo id whose
/// checkpoint serves the simulated weights.
std::string dynamo(const PlanCandidate& c, const LaunchTarget& t) {
  const bool repo_id = t.model && std::count(t.model->begin(), t.model->end(), '/') == 1 && t.model->front() != '/' && t.model->front() != '.';
  if (!repo_id || weight_plan(t, true) == WeightPlan::needs_checkpoint) return "";  // a pod sees no local directory
  if (t.lora_adapters > 0) return "";  // the adapters' paths are the operator's (serve.sh's LORA_MODULES)
  if (needs_draft_checkpoint(t)) return "";  // so is an EAGLE head's (serve.sh's DRAFT_MODEL)
  for (const auto& p : pools_of(c, t.moe)) {
    if (p.d.chips > t.chips_per_host) return "";
  }
  std::string y = comment("Dynamo (Kubernetes) deployment for `chalk plan`: " + t.model_name + " on " + t.system_name +
                          ". A DynamoGraphDeployment as ai-dynamo/dynamo's components/backends/vllm/deploy/" +
                          (c.disaggregated ? "disagg" : "agg") + ".yaml writes it; set image to the Dynamo vLLM runtime you run, and "
                          "hf-token-secret to your HF token secret. Keys checked against chalk's tests/data/engine-args/vllm.txt.");
  y += "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata:\n  name: chalk-plan\nspec:\n  services:\n";
  y += "    Frontend:\n      dynamoNamespace: chalk-plan\n      componentType: frontend\n      replicas: 1\n      extraPodSpec:\n"
       "        mainContainer:\n          image: " + std::string(kDynamoImage) + "\n";
  const auto pools = pools_of(c, t.moe);
  for (const auto& p : pools) y += worker(c, t, p, p.role == "prefill" ? "VllmPrefillWorker" : "VllmDecodeWorker");
  return y;
}

}  // namespace

EngineLaunch vllm_launch(const PlanCandidate& c, const LaunchTarget& t) {
  const auto pools = pools_of(c, t.moe);
  EngineLaunch e = start_launch("vllm", "vLLM", kVllmSource, pools);
  if (e.problem.empty() && vllm_kv_dtype(t.kv).empty()) {
    e.problem = "vLLM has no " + std::string(to_string(t.kv)) + " KV cache (--kv-cache-dtype takes auto, fp8, fp8_e5m2, fp8_e4m3)";
  }
  if (e.problem.empty()) e.problem = vllm_speculation_problem(t);
  for (const auto& p : pools) {
    // --enable-dbo asserts a DeepEP backend (VllmConfig.__post_init__): no files where vLLM
    // runs none for the model (review 11 H2), as for any layout it cannot state.
    if (!e.problem.empty() || !p.d.two_batches || !t.moe || p.d.ep < 2) continue;
    if (const std::string why = deepep_problem("vllm", t); !why.empty()) {
      e.problem = "vLLM cannot run this layout: two micro-batches (--enable-dbo) need a DeepEP all-to-all backend, and " + why;
    }
  }
  if (!e.problem.empty()) return e;
  for (const auto& p : pools) {
    if (e.differs.empty()) e.differs = vllm_differs(t, p);
  }
  for (const auto& p : pools) e.files.push_back({script_path("vllm", p), vllm_serve(c, t, p), true});
  if (c.disaggregated) e.files.push_back({"vllm/proxy.sh", proxy(c, t), true});
  if (const std::string d = dynamo(c, t); !d.empty()) e.files.push_back({"vllm/dynamo.yaml", d, false});
  return e;
}

}  // namespace chalk::sim::launch_detail
