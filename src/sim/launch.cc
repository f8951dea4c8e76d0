// Launch files for a planned deployment (launch.h): the pieces the three engines share, and
// the layouts each engine's flags can state. The engines' writers: launch_vllm.cc,
// launch_sglang.cc, launch_trtllm.cc.
#include "chalk/engine/engine_name.h"
#include "chalk/sim/launch.h"

#include <algorithm>
#include <cstdio>

#include "launch_internal.h"

namespace chalk::sim {
namespace launch_detail {

Degrees degrees(int64_t chips, const ParallelLayout& l, bool moe, int64_t pp) {
  Degrees d;
  d.chips = chips;
  d.pp = std::max<int64_t>(1, pp);
  const int64_t stage = chips / d.pp;
  d.tp = l.tp_attention > 0 ? l.tp_attention : stage;
  d.dp = stage / d.tp;
  d.ep = l.ep > 0 ? l.ep : 1;
  d.tp_ffn = l.tp_ffn > 0 ? l.tp_ffn : stage;
  d.moe = moe;
  d.two_batches = l.overlap_micro_batches;
  return d;
}

// Shared: a dense model's data-parallel attention groups under one FFN split over all chips
// (attention TP t x g, FFN TP r): every engine's data parallelism of a dense model is
// independent replicas, each with its own FFN. Per engine: vLLM's --enable-expert-parallel
// makes EP = TP x DP, so experts over fewer chips than the replica (EP e x TP r/e) have no
// flag; TensorRT-LLM's enable_attention_dp is attention TP1 over all tp_size ranks, so
// attention TP t x r/t with 1 < t < r has none; two micro-batches overlapping the all-to-all
// are vLLM's --enable-dbo and SGLang's --enable-two-batch-overlap, and trtllm-serve has no
// option for them.
std::string layout_problem(const std::string& name, const Degrees& d) {
  if (!d.moe && d.dp > 1) {
    return name + " cannot run this layout: attention TP" + std::to_string(d.tp) + " x " + std::to_string(d.dp) + " under one FFN TP" +
           std::to_string(d.tp_ffn) + " (its data parallelism of a dense model is independent replicas)";
  }
  if (name == "vLLM" && d.moe && d.ep > 1 && d.ep < d.stage_chips()) {
    return "vLLM cannot run this layout: EP" + std::to_string(d.ep) + " over " + std::to_string(d.stage_chips()) +
           " chips (--enable-expert-parallel spreads experts over all TP x DP ranks)";
  }
  if (name == "SGLang" && d.two_batches && (!d.moe || d.ep != d.stage_chips())) {
    // --enable-two-batch-overlap needs --moe-a2a-backend deepep (server_args.py
    // check_server_args), whose expert parallelism is --tp-size, every chip of the stage.
    return "SGLang cannot run this layout: two micro-batches need its DeepEP all-to-all, which spreads experts over all " +
           std::to_string(d.stage_chips()) + " chips, not EP" + std::to_string(d.ep);
  }
  if (name == "TensorRT-LLM" && d.two_batches) {
    return "TensorRT-LLM cannot run this layout: two micro-batches overlapping the expert all-to-all (trtllm-serve has no such option)";
  }
  if (name == "TensorRT-LLM" && d.moe && d.tp > 1 && d.dp > 1) {
    return "TensorRT-LLM cannot run this layout: attention TP" + std::to_string(d.tp) + " x " + std::to_string(d.dp) +
           " (enable_attention_dp runs attention TP1 on every rank)";
  }
  return "";
}

std::vector<Pool> pools_of(const PlanCandidate& c, bool moe) {
  std::vector<Pool> out;
  out.push_back({c.disaggregated ? "prefill" : "", degrees(c.replica_chips, c.parallel, moe, c.pp), c.replicas, c.layout, c.weight_bytes_per_chip});
  if (c.disaggregated) {
    out.push_back({"decode", degrees(c.decode_replica_chips, c.decode_parallel, moe), c.decode_replicas, c.decode_layout,
                   c.decode_weight_bytes_per_chip});
  }
  return out;
}

WeightPlan weight_plan(const LaunchTarget& t, bool online_fp8) {
  if (!t.weights || *t.weights == t.checkpoint_weights) return WeightPlan::checkpoint;
  const bool wide = t.checkpoint_weights == DType::bf16 || t.checkpoint_weights == DType::fp16 || t.checkpoint_weights == DType::fp32;
  return online_fp8 && *t.weights == DType::fp8 && wide ? WeightPlan::online_fp8 : WeightPlan::needs_checkpoint;
}

namespace {

/// `text` inside a double-quoted shell word: \ " $ ` escaped.
std::string dq(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '\\' || ch == '"' || ch == '$' || ch == '`') out += '\\';
    out += ch;
  }
  return out;
}

std::string pool_words(const Pool& p) { return count(p.replicas, "replica") + " x " + count(p.d.chips, "chip") + " (" + p.layout + ")"; }

}  // namespace

std::string count(int64_t n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

std::string comment(const std::string& text) {
  constexpr std::size_t kWidth = 96;  // "# " + text within 98 columns: chalk's output fits 100
  std::string out, line;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    if (!line.empty() && line.size() + 1 + word.size() > kWidth) {
      out += "# " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    at = end + 1;
  }
  return out + (line.empty() && !out.empty() ? "" : "#" + std::string(line.empty() ? "" : " ") + line + "\n");
}

std::string render(const Script& s) {
  std::string out = "#!/bin/sh\n";
  for (const auto& c : s.comments) out += comment(c);
  out += "set -eu\n";
  for (const auto& v : s.vars) out += v + "\n";
  for (std::size_t i = 0; i < s.command.size(); ++i) {
    out += (i == 0 ? "exec " : "  ") + s.command[i] + (i + 1 < s.command.size() ? " \\\n" : "\n");
  }
  return out;
}

std::string replica_var(const Pool& p) {
  return "REPLICA=\"${REPLICA:-0}\"  # 0 to " + std::to_string(std::max<int64_t>(1, p.replicas) - 1);
}

std::string replica_port_var(const std::string& name, int64_t base, int64_t stride) {
  const std::string step = stride == 1 ? "REPLICA" : "REPLICA * " + std::to_string(stride);
  return name + "=\"${" + name + ":-$((" + std::to_string(base) + " + " + step + "))}\"";
}

std::string replica_note(const Pool& p, const std::string& lister) {
  if (p.replicas <= 1 && p.role.empty()) return "";
  return "Start replica i (0 to " + std::to_string(std::max<int64_t>(1, p.replicas) - 1) + ") with REPLICA=i: its ports follow from it, " +
         "distinct from every other replica's, so several replicas share a host unedited" + (lister.empty() ? "." : ", and " + lister + " looks for replica i there.");
}

/// The fp8 checkpoint a file that needs one defaults MODEL to, when the plan simulated fp8.
static const std::string* fp8_default(const LaunchTarget& t, WeightPlan plan) {
  return plan == WeightPlan::needs_checkpoint && t.weights == DType::fp8 && t.fp8_checkpoint ? &*t.fp8_checkpoint : nullptr;
}

std::string model_var(const LaunchTarget& t, WeightPlan plan) {
  if (const std::string* fp8 = fp8_default(t, plan)) return "MODEL=\"${MODEL:-" + dq(*fp8) + "}\"";
  if (plan == WeightPlan::needs_checkpoint) {
    return "MODEL=\"${MODEL:?set MODEL to a checkpoint with " + std::string(to_string(*t.weights)) + " weights}\"";
  }
  if (!t.model) return "MODEL=\"${MODEL:?set MODEL to the HF repo id or local directory of " + dq(t.model_name) + "}\"";
  return "MODEL=\"${MODEL:-" + dq(*t.model) + "}\"";
}

std::string model_note(const LaunchTarget& t, WeightPlan plan, const std::string& engine, const std::string& why) {
  const std::string of = t.model ? *t.model : t.model_name;
  // Review 7 M4: the repository is 16-bit and the plan assumed fp8; each file says how its
  // engine gets fp8 weights (online at load, or a checkpoint named here).
  if (const std::string* fp8 = fp8_default(t, plan)) {
    return "chalk simulated fp8 weights and " + engine + " " + why + ": MODEL defaults to " + *fp8 + ", an fp8 checkpoint of " + of +
           " (data/models/served.json).";
  }
  if (plan == WeightPlan::needs_checkpoint) {
    return "chalk simulated " + std::string(to_string(*t.weights)) + " weights and " + engine + " " + why + ": MODEL must name a checkpoint of " +
           of + " in " + std::string(to_string(*t.weights)) + (t.weights == DType::fp8 ? " (chalk knows none)." : ".");
  }
  if (plan == WeightPlan::online_fp8) {
    return "The repository's weights are " + std::string(to_string(t.checkpoint_weights)) + " and chalk simulated fp8: " + engine +
           " quantizes them at load (--quantization fp8).";
  }
  if (!t.model) return "chalk knows no repository of " + t.model_name + "'s weights: MODEL must name one.";
  return "";
}

std::vector<std::string> header(const PlanCandidate& c, const LaunchTarget& t, const std::string& engine_title, const std::string& engine,
                                const std::string& checked_at, const Pool& p, int64_t cap_ranks) {
  std::vector<std::string> h;
  std::string what = p.role.empty() ? "server" : p.role == "prefill" ? "prefill server" : "decode server";
  h.push_back(engine_title + " " + what + " for `chalk plan`: " + t.model_name + " on " + t.system_name + ", " +
              (c.disaggregated ? "disaggregated" : "aggregated") + ", " + count(c.chips, "chip") + " in all.");
  // "Run once per decode replica (1 of 1)", not "Run once of the decode pool" (review 4 L2).
  const std::string role = p.role.empty() ? "" : p.role + " ";
  h.push_back(p.replicas == 1 ? (role.empty() ? "Run once: " : "Run once per " + role + "replica (1 of 1): ") + count(p.d.chips, "chip") + " (" + p.layout + ")."
                              : "Run once per " + role + "replica: " + pool_words(p) + ".");
  // Review 11a item 4: where the engine's cap flags apply per data-parallel rank (vLLM's
  // --max-num-seqs, TensorRT-LLM's --max_batch_size), the line gives both figures, so the
  // flags' smaller numbers read as what they are.
  const int64_t ranks = std::max<int64_t>(1, cap_ranks);
  const std::string per_rank = ranks == 1 ? std::string()
                                          : ", " + std::to_string((c.max_sequences + ranks - 1) / ranks) + " and " +
                                                std::to_string((c.max_batched_tokens + ranks - 1) / ranks) + " per data-parallel rank (" +
                                                engine_title + "'s caps below are per rank, " + std::to_string(ranks) + " ranks)";
  h.push_back("Per replica at most " + std::to_string(c.max_sequences) + " running requests and " + std::to_string(c.max_batched_tokens) +
              " tokens a step" + per_rank + "; weights " + std::string(to_string(t.weights.value_or(t.checkpoint_weights))) + ", KV cache " +
              std::string(to_string(t.kv)) + ".");
  const std::string simulated = release_name(t.policy);  // "vllm-0.10": that release's host overlap
  h.push_back(engine == t.policy.name ? "Simulated with this engine's scheduler (chalk plan --engine " + simulated + ")."
                                      : "Simulated with " + simulated + "'s scheduler (--engine " + simulated + "); " + engine_title +
                                            "'s own admission and batching may give other latencies.");
  if (t.max_model_len > 0) {
    // The simulated traffic's longest request bounds the engine's maximum length; a real
    // prompt past it is refused (review 2 L9), so the file says so where the flag is set.
    h.push_back("Maximum request length " + std::to_string(t.max_model_len) +
                " tokens (prompt + output), the longest simulated: the engine refuses longer requests; raise it for "
                "real traffic (each sequence's KV grows with it) and re-plan with that length.");
  }
  if (const std::string spec = speculation_note(t); !spec.empty()) h.push_back(spec);
  h.push_back("Flags checked against " + checked_at + ".");
  return h;
}

std::string fraction(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", x);
  std::string s = buf;
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

EngineLaunch start_launch(const std::string& engine, const std::string& title, const char* checked_at, const std::vector<Pool>& pools) {
  EngineLaunch e;
  e.engine = engine;
  e.checked_at = checked_at;
  for (const auto& p : pools) {
    if (e.problem.empty()) e.problem = layout_problem(title, p.d);
  }
  return e;
}

std::string script_path(const std::string& engine, const Pool& p) { return engine + "/" + (p.role.empty() ? std::string("serve") : p.role) + ".sh"; }

double trtllm_kv_fraction(const LaunchTarget& t, double weight_bytes_per_chip) {
  const double hbm = t.hbm_bytes_per_chip, w = weight_bytes_per_chip;
  if (!(hbm > w) || w < 0) return 1.0 - t.memory_reserve_fraction;
  return std::clamp(((1.0 - t.memory_reserve_fraction) * hbm - w) / (hbm - w), 0.001, 1.0);
}

}  // namespace launch_detail

std::vector<EngineLaunch> launch_files(const PlanCandidate& c, const LaunchTarget& t) {
  std::vector<EngineLaunch> out = {launch_detail::vllm_launch(c, t), launch_detail::sglang_launch(c, t),
                                   launch_detail::trtllm_launch(c, t)};
  // The files are for the engines' GPU builds: CUDA for all three, ROCm for vLLM and SGLang.
  const bool fp8 = t.kv == DType::fp8 || (t.weights && *t.weights == DType::fp8);
  for (auto& e : out) {
    std::string why;
    if (t.accelerator.empty()) {
      why = "the launch files are for the engines' GPU builds; " + t.system_name + " runs a plugin build (TPU, Neuron or Gaudi) whose flags chalk does not check";
    } else if (e.engine == "trtllm" && t.accelerator != "nvidia") {
      why = "TensorRT-LLM runs on NVIDIA GPUs only, not " + t.system_name;
    } else if (e.engine == "trtllm" && fp8 && !t.chip_has_fp8) {
      why = "TensorRT-LLM's fp8 needs FP8 tensor cores (Ada, Hopper, Blackwell: sm89+), which " + t.system_name + " lacks";
    }
    if (!why.empty()) {
      e.problem = why;  // the chip first: no layout of it would run
      e.differs.clear();
      e.files.clear();
    } else if (t.accelerator != "nvidia") {
      // Dynamo's images are CUDA builds: no manifest for another GPU.
      std::erase_if(e.files, [](const LaunchFile& f) { return f.path.ends_with("dynamo.yaml"); });
    }
  }
  for (auto& e : out) e.simulated = e.engine == t.policy.name;
  std::stable_partition(out.begin(), out.end(), [](const EngineLaunch& e) { return e.simulated; });
  return out;
}

std::vector<EngineLaunch> mixed_launch_files(const PlanCandidate& c, const LaunchTarget& prefill, const LaunchTarget& decode) {
  std::vector<EngineLaunch> out = launch_files(c, decode);
  const std::vector<EngineLaunch> pre = launch_files(c, prefill);
  const auto prefill_file = [](const LaunchFile& f) { return f.path.substr(f.path.find('/') + 1).starts_with("prefill"); };
  for (auto& e : out) {
    const auto p = std::find_if(pre.begin(), pre.end(), [&](const EngineLaunch& x) { return x.engine == e.engine; });
    if (e.problem.empty() && !p->problem.empty()) e.problem = p->problem + " (the prefill pool's " + prefill.system_name + ")";
    if (e.problem.empty() && prefill.accelerator != decode.accelerator) {
      e.problem = "the pools run different GPU builds (" + prefill.system_name + ": " + prefill.accelerator + ", " + decode.system_name + ": " +
                  decode.accelerator + "); no engine documents its KV transfer between them";
    }
    if (!e.problem.empty()) {
      e.files.clear();
      continue;
    }
    if (e.differs.empty()) e.differs = p->differs;  // the prefill pool's, from its own chip's files
    // The prefill pool's files from its own chip; the decode pool's and the front end's from
    // the decode chip; no Dynamo manifest (its workers would need a node selector per chip type).
    std::erase_if(e.files, [&](const LaunchFile& f) { return prefill_file(f) || f.path.ends_with("dynamo.yaml"); });
    for (const auto& f : p->files) {
      if (prefill_file(f)) e.files.push_back(f);
    }
    std::stable_partition(e.files.begin(), e.files.end(), prefill_file);
  }
  return out;
}

std::string launch_accelerator(std::string_view system_name) {
  if (system_name.starts_with("mi")) return "amd";
  if (system_name.starts_with("tpu") || system_name.starts_with("trn") || system_name.starts_with("gaudi")) return "";
  return "nvidia";
}

std::string engine_layout_problem(std::string_view release, int64_t chips, const ParallelLayout& layout, bool moe) {
  const std::string_view engine = engine_family(release);  // "vllm-0.10": vLLM's flags
  const std::string name = engine == "vllm" ? "vLLM" : engine == "sglang" ? "SGLang" : engine == "trtllm" ? "TensorRT-LLM" : "";
  if (name.empty()) return "";
  return launch_detail::layout_problem(name, launch_detail::degrees(chips, layout, moe));
}

namespace launch_detail {

int64_t replica_hosts(const LaunchTarget& t, int64_t chips) {
  const int64_t per = std::max<int64_t>(t.chips_per_host, 1);
  return std::max<int64_t>((chips + per - 1) / per, 1);
}

std::string replica_gpus(const LaunchTarget& t, int64_t chips) {
  const int64_t hosts = replica_hosts(t, chips);
  if (hosts == 1) return "its own " + count(chips, "GPU") + " (CUDA_VISIBLE_DEVICES)";
  return "its own " + std::to_string(hosts) + " hosts of " + count(t.chips_per_host, "GPU");
}

}  // namespace launch_detail

}  // namespace chalk::sim
