// SGLang's launch files (launch.h): `python3 -m sglang.launch_server` per replica and its
// router (`python3 -m sglang_router.launch_router`) over several replicas or, disaggregated,
// over the prefill and decode servers. Flag names: tests/data/engine-args/sglang.txt.
#include <algorithm>
#include <string>
#include <vector>

#include "launch_internal.h"

namespace chalk::sim::launch_detail {
namespace {

/// SGLang's --kv-cache-dtype for a simulated KV format, or "" when it has none (choices
/// auto, fp8_e5m2, fp8_e4m3, mxfp8, bf16, bfloat16, nvfp4, fp4_mx_block16, fp4_e2m1).
std::string kv_dtype(DType kv) {
  if (kv == DType::bf16 || kv == DType::fp16) return "auto";
  if (kv == DType::fp8) return "fp8_e4m3";
  if (kv == DType::nvfp4) return "nvfp4";
  return "";
}

/// SGLang's LoRA arguments for a plan with adapters (LaunchTarget::lora_adapters; none
/// without), from ServerArgs' LoRA section (python/sglang/srt/server_args.py): the adapters
/// one batch may hold, the simulated HBM slots (--max-loras-per-batch, "Maximum number of
/// adapters for a running batch, include base-only request"; every simulated request names
/// an adapter), their rank, every adapter in host memory (--max-loaded-loras N, "limits the
/// maximum number of LoRA adapters loaded in CPU memory ... must be greater than or equal to
/// --max-loras-per-batch"), and the adapters (--lora-paths, nargs "*", "<NAME>=<PATH>" each),
/// left unquoted so that LORA_PATHS splits into them.
std::vector<std::string> lora_args(const PlanCandidate& c, const LaunchTarget& t) {
  if (t.lora_adapters < 1) return {};
  const int64_t slots = c.lora ? c.lora->max_loras : 1;
  return {"--enable-lora", "--max-loras-per-batch " + std::to_string(slots), "--max-lora-rank " + std::to_string(t.lora_rank),
          "--max-loaded-loras " + std::to_string(std::max(t.lora_adapters, slots)), "--lora-paths $LORA_PATHS"};
}

/// Whether the pool's experts span its stage (EP = every chip of the stage), the layout whose
/// all-to-all SGLang runs with DeepEP (--moe-a2a-backend deepep sets EP to --tp-size).
bool sglang_experts_span_stage(const LaunchTarget& t, const Pool& p) { return t.moe && p.d.ep > 1 && p.d.ep == p.d.stage_chips(); }

/// How SGLang's files for pool `p` differ from what chalk priced, "" when they do not: with
/// several attention-DP ranks chalk prices DeepEP's all-to-all (the engine step's ep_traffic),
/// and without DeepEP for the model (deepep_problem) SGLang's default MoE path gathers the DP
/// ranks' tokens and reduces the experts' outputs instead. With one DP rank chalk prices the
/// all-reduce path, which SGLang's default runs.
std::string sglang_differs(const LaunchTarget& t, const Pool& p) {
  if (!sglang_experts_span_stage(t, p) || p.d.dp < 2) return "";
  const std::string why = deepep_problem("sglang", t);
  if (why.empty()) return "";
  return "chalk priced DeepEP's all-to-all between the " + std::to_string(p.d.dp) + " attention-DP ranks and the experts" +
         (p.role.empty() ? std::string() : " (the " + p.role + " pool)") + ", but " + why +
         "; the files run SGLang's default MoE path (the ranks' tokens gathered, the experts' outputs reduced), so its latencies may differ "
         "from the simulated";
}

constexpr int64_t kServePort = 30000, kDecodePort = 31000;
constexpr int64_t kBootstrapPort = 8998;  // --disaggregation-bootstrap-port's default

std::string serve(const PlanCandidate& c, const LaunchTarget& t, const Pool& p) {
  const WeightPlan w = weight_plan(t, true);
  Script s;
  s.comments = header(c, t, "SGLang", "sglang", kSglangSource, p);
  s.comments.push_back("Give each replica " + replica_gpus(t, p.d.chips) + ".");
  if (const std::string note = replica_note(p, "router.sh"); !note.empty()) s.comments.push_back(note);
  if (p.role == "prefill") {
    s.comments.push_back("Each prefill server also listens on its bootstrap port, BOOTSTRAP_PORT (--disaggregation-bootstrap-port), "
                         "which router.sh gives with its URL.");
  }
  if (c.reserve_to_completion) {
    s.comments.push_back("Simulated with KV reserved to completion at admission; SGLang has no flag for it.");
  }
  if (const std::string note = model_note(t, w, "SGLang", "quantizes online only to fp8, from a 16-bit checkpoint"); !note.empty()) s.comments.push_back(note);
  s.vars.push_back(model_var(t, w));
  if (const std::string draft = draft_model_var(t); !draft.empty()) s.vars.push_back(draft);
  s.vars.push_back(replica_var(p));
  s.vars.push_back(replica_port_var("PORT", p.role == "decode" ? kDecodePort : kServePort));
  // The prefill server's bootstrap server (review 10 H1): server_args.py's
  // --disaggregation-bootstrap-port (default 8998) binds one port a prefill server, so a second
  // prefill server on the host needs its own; the router names it after each prefill URL.
  if (p.role == "prefill") s.vars.push_back(replica_port_var("BOOTSTRAP_PORT", kBootstrapPort));
  if (t.lora_adapters > 0) {
    s.comments.push_back("Simulated with " + count(t.lora_adapters, "LoRA adapter") + " of rank " + std::to_string(t.lora_rank) +
                         ", every request naming one: set LORA_PATHS to them, name=path each, separated by spaces. SGLang counts "
                         "requests on the base model as one more adapter in a batch's --max-loras-per-batch.");
    s.vars.push_back("LORA_PATHS=\"${LORA_PATHS:?set LORA_PATHS: the " + count(t.lora_adapters, "adapter") + " as name=path, space-separated}\"");
  }
  const int64_t hosts = replica_hosts(t, p.d.chips);
  if (hosts > 1) {
    // One replica over several hosts (GB200 NVL72: trays of 4 GPUs): SGLang's multi-node
    // launch, the same command on each host with its rank (server_args.py: --nnodes,
    // --node-rank, --dist-init-addr).
    s.comments.push_back("A replica spans " + std::to_string(hosts) + " hosts of " + count(t.chips_per_host, "GPU") +
                         ": run this on each, NODE_RANK 0 to " + std::to_string(hosts - 1) + ", DIST_INIT_ADDR the rank-0 host's address:port.");
    s.vars.push_back("NODE_RANK=\"${NODE_RANK:?set NODE_RANK: 0 to " + std::to_string(hosts - 1) + ", one per host}\"");
    s.vars.push_back("DIST_INIT_ADDR=\"${DIST_INIT_ADDR:?set DIST_INIT_ADDR: the rank-0 host, address:port}\"");
  }
  s.command = {"python3 -m sglang.launch_server", "--model-path \"$MODEL\"", "--host 0.0.0.0", "--port \"$PORT\"",
               "--tp-size " + std::to_string(p.d.stage_chips())};
  if (p.d.pp > 1) s.command.push_back("--pp-size " + std::to_string(p.d.pp));  // pipeline stages (PlanCandidate::pp)
  if (hosts > 1) {
    s.command.push_back("--nnodes " + std::to_string(hosts));
    s.command.push_back("--node-rank \"$NODE_RANK\"");
    s.command.push_back("--dist-init-addr \"$DIST_INIT_ADDR\"");
  }
  if (p.d.dp > 1) {
    s.command.push_back("--dp-size " + std::to_string(p.d.dp));
    s.command.push_back("--enable-dp-attention");
  }
  if (t.moe && p.d.ep > 1) s.command.push_back("--ep-size " + std::to_string(p.d.ep));
  if (t.moe && p.d.ep > 1 && t.eplb) {
    s.command.push_back("--enable-eplb");
    s.command.push_back("--ep-num-redundant-experts " + std::to_string(p.d.ep));
  }
  const std::string no_deepep = sglang_experts_span_stage(t, p) ? deepep_problem("sglang", t) : std::string();
  if (const std::string differs = sglang_differs(t, p); !differs.empty()) {
    s.comments.push_back("Not as simulated: " + differs + ".");
  } else if (!no_deepep.empty()) {
    s.comments.push_back("No --moe-a2a-backend deepep: " + no_deepep +
                         ". With one attention-DP rank chalk priced the experts' all-reduce path, which SGLang's default MoE path runs.");
  }
  if (sglang_experts_span_stage(t, p) && no_deepep.empty()) {
    // The all-to-all chalk's step prices: DeepEP's kernels, normal for a step with prompt
    // chunks and low-latency for a pure decode step (ep_kernels.h), which is what
    // --deepep-mode auto resolves per step (python/sglang/srt/layers/moe/utils.py,
    // DeepEPMode.resolve). SGLang's default --moe-a2a-backend none runs no DeepEP, and
    // check_server_args (python/sglang/srt/server_args.py) raises "When enabling two batch
    // overlap, moe_a2a_backend cannot be 'none'" (review 8 H3). Its DeepEP backend sets the
    // expert-parallel size to --tp-size, so it is written where the experts span the stage,
    // for a model whose SGLang file runs it (deepep_problem, review 11 H2).
    s.command.push_back("--moe-a2a-backend deepep");
    s.command.push_back("--deepep-mode auto");
  }
  if (p.d.two_batches) s.command.push_back("--enable-two-batch-overlap");
  if (w == WeightPlan::online_fp8) s.command.push_back("--quantization fp8");
  s.command.push_back("--kv-cache-dtype " + kv_dtype(t.kv));
  s.command.push_back("--mem-fraction-static " + fraction(1.0 - t.memory_reserve_fraction));
  s.command.push_back("--max-running-requests " + std::to_string(c.max_sequences));
  if (t.policy.chunked_prefill) {
    s.command.push_back("--chunked-prefill-size " + std::to_string(c.max_batched_tokens));
  } else {
    s.command.push_back("--chunked-prefill-size -1");  // -1 disables chunked prefill
    s.command.push_back("--max-prefill-tokens " + std::to_string(c.max_batched_tokens));
  }
  s.command.push_back("--page-size " + std::to_string(t.policy.block_size));  // the simulated KV block, whichever engine's
  if (t.max_model_len > 0) s.command.push_back("--context-length " + std::to_string(t.max_model_len));
  if (t.trust_remote_code) s.command.push_back("--trust-remote-code");  // the config's auto_map names the repo's code
  if (t.enforce_eager) {  // simulated without CUDA graphs (SGLang's disable_cuda_graph itself has no flag)
    s.command.push_back("--disable-prefill-cuda-graph");
    s.command.push_back("--disable-decode-cuda-graph");
  }
  for (const auto& a : lora_args(c, t)) s.command.push_back(a);
  for (const auto& a : sglang_speculation_args(t)) s.command.push_back(a);  // the drafts simulated
  if (!p.role.empty()) s.command.push_back("--disaggregation-mode " + p.role);
  if (p.role == "prefill") s.command.push_back("--disaggregation-bootstrap-port \"$BOOTSTRAP_PORT\"");
  return render(s);
}

std::string url_var(const std::string& name, int64_t i, int64_t port) {
  return "\"${" + name + "_" + std::to_string(i) + ":-http://localhost:" + std::to_string(port + i) + "}\"";
}

std::string router(const PlanCandidate& c, const LaunchTarget& t) {
  Script s;
  s.comments = {std::string("SGLang router for `chalk plan`: ") + t.model_name + " on " + t.system_name + ", " +
                    (c.disaggregated ? count(c.replicas, "prefill replica") + " and " + count(c.decode_replicas, "decode replica") + "."
                                     : count(c.replicas, "replica") + "."),
                c.disaggregated ? "It sends each request to a prefill server (prefill.sh, with its bootstrap port) and a decode server (decode.sh)."
                                : "It spreads the requests over the replicas (serve.sh).",
                "Set each replica's URL (PREFILL_URL_i, DECODE_URL_i, WORKER_URL_i) to where it was started, and each prefill server's "
                "PREFILL_BOOTSTRAP_PORT_i when it is not its REPLICA's default.",
                std::string("Flags checked against ") + kSglangSource + " (sgl-model-gateway/bindings/python/src/sglang_router/router_args.py @ "
                    "05e589ad6f75127e5302a250d9e83a881fbb3a3b)."};
  s.vars = {"PORT=\"${PORT:-8000}\""};
  s.command = {"python3 -m sglang_router.launch_router"};
  if (c.disaggregated) {
    s.command.push_back("--pd-disaggregation");
    for (int64_t i = 0; i < c.replicas; ++i) {
      s.command.push_back("--prefill " + url_var("PREFILL_URL", i, kServePort) + " \"${PREFILL_BOOTSTRAP_PORT_" + std::to_string(i) + ":-" +
                          std::to_string(kBootstrapPort + i) + "}\"");
    }
    for (int64_t i = 0; i < c.decode_replicas; ++i) s.command.push_back("--decode " + url_var("DECODE_URL", i, kDecodePort));
  } else {
    s.command.push_back("--worker-urls");
    for (int64_t i = 0; i < c.replicas; ++i) s.command.push_back("  " + url_var("WORKER_URL", i, kServePort));
  }
  s.command.push_back("--host 0.0.0.0");
  s.command.push_back("--port \"$PORT\"");
  return render(s);
}

}  // namespace

EngineLaunch sglang_launch(const PlanCandidate& c, const LaunchTarget& t) {
  const auto pools = pools_of(c, t.moe);
  EngineLaunch e = start_launch("sglang", "SGLang", kSglangSource, pools);
  if (e.problem.empty() && kv_dtype(t.kv).empty()) {
    e.problem = "SGLang has no " + std::string(to_string(t.kv)) + " KV cache (--kv-cache-dtype takes auto, fp8_e4m3, fp8_e5m2, nvfp4, ...)";
  }
  if (e.problem.empty()) e.problem = sglang_speculation_problem(t, pools);
  for (const auto& p : pools) {
    // --enable-two-batch-overlap needs the DeepEP backend (check_server_args), which SGLang
    // does not run for every model (review 11 H2): no files then, as for any layout it cannot state.
    if (!e.problem.empty() || !p.d.two_batches) continue;
    if (const std::string why = deepep_problem("sglang", t); !why.empty()) {
      e.problem = "SGLang cannot run this layout: two micro-batches need its DeepEP all-to-all, and " + why;
    }
  }
  if (!e.problem.empty()) return e;
  for (const auto& p : pools) {
    if (e.differs.empty()) e.differs = sglang_differs(t, p);
  }
  for (const auto& p : pools) e.files.push_back({script_path("sglang", p), serve(c, t, p), true});
  if (c.disaggregated || c.replicas > 1) e.files.push_back({"sglang/router.sh", router(c, t), true});
  return e;
}

}  // namespace chalk::sim::launch_detail
