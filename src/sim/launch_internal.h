// Internal to the launch files (launch.h): the shared pieces of the three engines' writers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chalk/sim/launch.h"
#include "chalk/sim/plan.h"

namespace chalk::sim::launch_detail {

/// One replica's parallel degrees as the engines' flags count them.
struct Degrees {
  int64_t chips = 1, tp = 1, dp = 1, ep = 1;
  /// Pipeline stages (PlanCandidate::pp): `chips` is the whole replica's, tp x dp x pp; every
  /// engine's flag (vLLM --pipeline-parallel-size, SGLang --pp-size, trtllm-serve --pp_size).
  int64_t pp = 1;
  int64_t stage_chips() const { return chips / pp; }  ///< chips one stage's tensor-parallel flag counts
  int64_t tp_ffn = 1;        ///< dense FFN's tensor-parallel degree
  bool moe = false;
  bool two_batches = false;  ///< two micro-batches overlap the expert all-to-all
};

/// `chips` of the whole replica, `l` the layout of one stage's chips (of the replica when pp = 1).
Degrees degrees(int64_t chips, const ParallelLayout& l, bool moe, int64_t pp = 1);

/// Why engine `name` ("vLLM", "SGLang", "TensorRT-LLM") cannot state the layout `d`, or "".
std::string layout_problem(const std::string& name, const Degrees& d);

/// One pool of servers a launch starts: the aggregated replicas, or the prefill or the
/// decode pool of a disaggregated deployment.
struct Pool {
  std::string role;  ///< "" (aggregated), "prefill" or "decode"
  Degrees d;
  int64_t replicas = 1;
  std::string layout;              ///< describe_layout's name
  double weight_bytes_per_chip = 0;
};

/// The pools of `c`: one aggregated, or prefill then decode.
std::vector<Pool> pools_of(const PlanCandidate& c, bool moe);

/// The files of engine `engine` ("vllm", "sglang", "trtllm") for a plan, started: its name,
/// the source its flags were checked against, and the first pool whose layout engine
/// `title` ("vLLM", ...) cannot state (layout_problem) as `problem`; no files yet.
EngineLaunch start_launch(const std::string& engine, const std::string& title, const char* checked_at, const std::vector<Pool>& pools);

/// A pool's serve script: "ENGINE/serve.sh" aggregated, "ENGINE/prefill.sh" or
/// "ENGINE/decode.sh" disaggregated.
std::string script_path(const std::string& engine, const Pool& p);

/// How the simulated weight format is served: the checkpoint as it is, quantized online to
/// FP8 by the engine (`--quantization fp8`, vLLM and SGLang from a 16-bit checkpoint), or
/// only from a checkpoint already in that format (MODEL must name one).
enum class WeightPlan { checkpoint, online_fp8, needs_checkpoint };
WeightPlan weight_plan(const LaunchTarget& t, bool online_fp8);

/// A shell script: comment lines (without "# "), variable lines, and one command whose
/// arguments are given one group per line.
struct Script {
  std::vector<std::string> comments;
  std::vector<std::string> vars;
  std::vector<std::string> command;  ///< command[0] follows `exec `; the rest continue with " \"
};

/// "#!/bin/sh", the comments, `set -eu`, the variables, `exec` and the command, each argument
/// line but the last ending in " \".
std::string render(const Script& s);

/// The MODEL line: `MODEL="${MODEL:-repo}"`, or `MODEL="${MODEL:?...}"` when no repository is
/// known or the weight plan needs another checkpoint.
std::string model_var(const LaunchTarget& t, WeightPlan plan);

/// The comment saying why MODEL must be set ("" when it has a default): `engine` and `why`
/// say why the simulated weights need their own checkpoint.
std::string model_note(const LaunchTarget& t, WeightPlan plan, const std::string& engine, const std::string& why);

/// `text` as shell or YAML comment lines, "# " each, wrapped at spaces within 98 columns.
std::string comment(const std::string& text);

/// The comments every script opens with: what chalk planned, which scheduler was simulated,
/// where the flags were checked, and what the pool runs. `cap_ranks`: the ranks over which
/// the engine applies its running-request and token caps each (vLLM's and TensorRT-LLM's
/// flags are per data-parallel rank: the pool's dp; SGLang's are per replica: 1); above 1 the
/// caps line gives the per-rank figures the flags carry beside the replica's (review 11a item 4).
std::vector<std::string> header(const PlanCandidate& c, const LaunchTarget& t, const std::string& engine_title,
                                const std::string& engine, const std::string& checked_at, const Pool& p, int64_t cap_ranks = 1);

/// The hosts one replica of `chips` spans: ceil(chips / t.chips_per_host), at least 1.
int64_t replica_hosts(const LaunchTarget& t, int64_t chips);

/// "its own 8 GPUs (CUDA_VISIBLE_DEVICES)", or across hosts (issue 30 item 7: an 8-GPU
/// replica on GB200 NVL72 is 2 compute trays of 4) "its own 2 hosts of 4 GPUs".
std::string replica_gpus(const LaunchTarget& t, int64_t chips);

/// Replica numbering (review 10 H1: several replicas share an 8-GPU host): every serve
/// script reads REPLICA (0 to the pool's replicas - 1, default 0) and derives each port it
/// listens on from it, so replica i started with REPLICA=i listens where the proxy or router
/// looks for replica i (its own defaults: base + i) and no two replicas of a deployment bind
/// the same port. The REPLICA line.
std::string replica_var(const Pool& p);
/// `NAME="${NAME:-$((base + REPLICA * stride))}"`: a port derived from REPLICA.
std::string replica_port_var(const std::string& name, int64_t base, int64_t stride = 1);
/// The comment saying how to start replica i.
std::string replica_note(const Pool& p, const std::string& lister);

/// "1 chip", "8 chips": `n` and `word`, with an "s" unless n is 1.
std::string count(int64_t n, const std::string& word);

/// A fraction written with 3 decimals, trailing zeros dropped ("0.9", "0.873").
std::string fraction(double x);

/// TensorRT-LLM's kv_cache_config.free_gpu_memory_fraction for the simulated memory: the KV
/// cache's share of what the weights leave, ((1 - reserve) HBM - W) / (HBM - W) per chip.
double trtllm_kv_fraction(const LaunchTarget& t, double weight_bytes_per_chip);

/// Speculative decoding (launch_speculation.cc; LaunchTarget::draft_tokens, drafter). The
/// drafter's checkpoint is the operator's (an EAGLE head) or a draft model's: the scripts'
/// DRAFT_MODEL.
bool needs_draft_checkpoint(const LaunchTarget& t);
/// The comment every script carries for the drafting simulated ("" without).
std::string speculation_note(const LaunchTarget& t);
/// The DRAFT_MODEL line (its repository as default when known, else required), "" when none.
std::string draft_model_var(const LaunchTarget& t);
/// Why vLLM cannot run the drafter (a separate draft model on the v0.11 line; EAGLE-3 on a
/// target family SpeculativeConfig does not list), or "".
std::string vllm_speculation_problem(const LaunchTarget& t);
/// vLLM's `--speculative-config JSON` argument ({method, model, num_speculative_tokens}), or "".
std::string vllm_speculative_config(const LaunchTarget& t);
/// The SPECULATIVE_CONFIG line holding that JSON where it names the script's DRAFT_MODEL (an
/// EAGLE head), "" otherwise (the MTP module's JSON is written in place).
std::string vllm_speculative_config_var(const LaunchTarget& t);
/// Why SGLang cannot run the drafter for `pools` (a separate draft model under DP attention), or "".
std::string sglang_speculation_problem(const LaunchTarget& t, const std::vector<Pool>& pools);
/// SGLang's arguments: --speculative-algorithm, --speculative-draft-model-path,
/// --speculative-num-steps K, --speculative-eagle-topk 1, --speculative-num-draft-tokens K + 1.
std::vector<std::string> sglang_speculation_args(const LaunchTarget& t);
/// Why TensorRT-LLM cannot run the drafter (an EAGLE-1 head), or "".
std::string trtllm_speculation_problem(const LaunchTarget& t);
/// TensorRT-LLM's speculative_config YAML block (decoding_type, num_nextn_predict_layers or
/// max_draft_len, speculative_model_dir), or "".
std::string trtllm_speculative_yaml(const LaunchTarget& t);

/// Why engine `engine` ("vllm", "sglang") runs no DeepEP all-to-all for the target's model
/// (LaunchTarget::no_deepep, one line with its source), or "" when it runs it.
inline std::string deepep_problem(const std::string& engine, const LaunchTarget& t) {
  const auto it = t.no_deepep.find(engine);
  return it == t.no_deepep.end() ? std::string() : it->second;
}

/// The three engines' writers (launch_vllm.cc, launch_sglang.cc, launch_trtllm.cc).
EngineLaunch vllm_launch(const PlanCandidate& c, const LaunchTarget& t);
EngineLaunch sglang_launch(const PlanCandidate& c, const LaunchTarget& t);
EngineLaunch trtllm_launch(const PlanCandidate& c, const LaunchTarget& t);

/// Where each engine's flag names were checked (tests/data/engine-args/).
inline constexpr const char* kVllmSource =
    "github.com/vllm-project/vllm @ 99d7eb5d6a512cfcc5a2b104f24ebf2d6cda772b (vllm/engine/arg_utils.py, the v0.11 line)";
inline constexpr const char* kVllmProxySource =
    "github.com/vllm-project/vllm @ 030ea52effcb05071543c8c42b8f0145e94cee43 "
    "(tests/v1/kv_connector/nixl_integration/toy_proxy_server.py, parse_args)";
inline constexpr const char* kSglangSource =
    "github.com/sgl-project/sglang @ 001067fffe33427bee0ed2f007fb7551a1d76b44 (python/sglang/srt/server_args.py)";
inline constexpr const char* kTrtllmSource =
    "github.com/NVIDIA/TensorRT-LLM @ 00209af149e7774406881a37283dce303571eb11 (tensorrt_llm/commands/serve.py)";

}  // namespace chalk::sim::launch_detail
