// What a deployment is, as the commands print it: the model, hardware and layout
// (describe_json, describe_text), the warnings a stated setup earns, and the note saying
// which layout a command chose (choose_layout; the replica note: replica_note.cc; the
// shortened source note: source_note.cc). Split from
// deployment_options.cc, which parses and resolves the deployment flags.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "chalk/io/io.h"
#include "chalk/model/expert_skew.h"
#include "deployment_options.h"
#include "table.h"

namespace chalk::cli {
std::string dense_attention_groups_warning(const ModelSpec& m, const ParallelLayout& l, int64_t chips) {
  const bool moe = std::any_of(m.groups.begin(), m.groups.end(), [](const LayerGroup& g) { return g.ffn.kind == FfnKind::moe; });
  if (moe || l.tp_attention >= l.tp_ffn) return "";
  // Review 11 L1: `-n 7` for Llama 3.1 70B priced attention TP1 x 7 under FFN TP7 unsaid, where
  // -n 3 is refused. An MoE's data-parallel attention over expert parallelism is what SGLang's
  // --enable-dp-attention, vLLM's DP + EP and TensorRT-LLM's enable_attention_dp run; a dense
  // model's data-parallel ranks are whole replicas in every engine (docs/simulator.md).
  std::vector<int64_t> near;
  for (int64_t k = chips - 1; k >= 1; --k) {
    if (attention_split_problem(m, k).empty()) {
      near.push_back(k);
      break;
    }
  }
  for (int64_t k = chips + 1; k <= 4 * chips; ++k) {
    if (attention_split_problem(m, k).empty()) {
      near.push_back(k);
      break;
    }
  }
  std::string sizes;
  for (std::size_t i = 0; i < near.size(); ++i) sizes += fmt::format("{}-n {}", i == 0 ? "" : " or ", near[i]);
  return fmt::format("attention TP{} x {} under FFN TP{}: no serving engine runs a dense model's attention in data-parallel groups "
                     "under one FFN split (vLLM, SGLang and TensorRT-LLM run each data-parallel rank as a whole replica), so "
                     "no engine reaches these figures; {} splits the {} heads{}",
                     l.tp_attention, l.tp_ffn / std::max<int64_t>(l.tp_attention, 1), l.tp_ffn,
                     sizes.empty() ? std::string("no nearby -n") : sizes, m.groups.empty() ? 0 : m.groups.front().attention.n_heads,
                     " (Pope et al. 2022 ran PaLM so on TPU v4)");
}

std::vector<std::string> deployment_warnings(const Deployment& d) {
  std::vector<std::string> w;
  if (d.n_chips > d.system.scale_up_domain && !d.mechanisms.enabled) {
    w.push_back(fmt::format("{} chips span {} scale-up domains of {}: their collectives would cross the scale-out network "
                            "(about 8x slower, lecture 39:00), which the roofline does not model (drop --roofline)",
                            d.n_chips, (d.n_chips + d.system.scale_up_domain - 1) / d.system.scale_up_domain, d.system.scale_up_domain));
  }
  // Weights in a format whose tensor-core rate the chip lacks (FP4 on Hopper, Ampere and
  // TPUs; FP8 on Ampere and TPU v5p; no such rate in the hardware file's peaks): the engine
  // dequantises them to the compute format before each matmul, so only their bytes are the
  // format's (review 5 L5; matmul_rate.h prices the matmuls at the compute rate). One check
  // for every format and chip (review 6 M9: FP8 experts on tpu-v5p went unsaid where MXFP4
  // was warned), one line per rate class lacking. The KV cache by the same rule (review 7 L5:
  // nvfp4 KV on h100-sxm, fp8 KV on tpu-v5p went unsaid): its bytes are the format's, and
  // attention reads it dequantised to the compute format.
  const WeightFormats& wf = d.weights;
  const struct {
    DType format;
    bool kv;
  } formats[] = {{wf.attention, false}, {wf.dense_ffn, false}, {wf.experts, false}, {wf.embedding, false}, {d.kv, true}};
  std::vector<std::pair<MatmulPrecision, bool>> said;
  for (const auto& [f, kv] : formats) {
    if (f == DType::fp32) continue;
    const MatmulPrecision p = matmul_precision(f, kv ? "kv" : "weights");
    if (p == MatmulPrecision::bf16 || d.system.chip.supports(p) || std::find(said.begin(), said.end(), std::pair(p, kv)) != said.end()) continue;
    said.emplace_back(p, kv);
    std::string rate(to_string(p));
    std::transform(rate.begin(), rate.end(), rate.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const double bits = std::floor(bits_per_element(f));
    if (kv) {
      w.push_back(fmt::format("{} KV cache on {}, which has no {} tensor cores: stored as {} ({:g}-bit bytes), dequantised to {} for "
                              "attention ({} FLOP rate)",
                              to_string(f), d.system.name, rate, to_string(f), bits, to_string(d.compute), to_string(d.compute)));
    } else {
      w.push_back(fmt::format("{} weights on {}, which has no {} tensor cores: weight-only {}, dequantised to {} for each matmul "
                              "({:g}-bit bytes, {} FLOP rate)",
                              to_string(f), d.system.name, rate, rate, to_string(d.compute), bits, to_string(d.compute)));
    }
  }
  if (d.mechanisms.enabled) {
    const std::string problem = attention_split_problem(d.model, d.mechanisms.layout.tp_attention);
    if (!problem.empty()) {
      w.push_back(problem + ": serving engines refuse this split (pad the heads, as Pope et al. 2022 did, or see `chalk layouts`)");
    }
    const auto& l = d.mechanisms.layout;
    if (std::string groups = dense_attention_groups_warning(d.model, l, d.n_chips); !groups.empty()) w.push_back(std::move(groups));
    // Tensor parallelism wider than the scale-up domain (review L9: TP64 over eight 8-card L4
    // servers): every layer's all-reduce crosses the scale-out network; say so and name the
    // pipeline that keeps each stage's TP within one domain.
    const int64_t domain = std::max<int64_t>(d.system.scale_up_domain, 1), tp = std::max(l.tp_attention, l.tp_ffn);
    if (d.n_chips > domain && !(d.system.scale_out_bandwidth_per_direction.value() > 0)) {
      // No scale-out network stated (L4, L40S, A10G, H100 NVL): the engine step prices every
      // collective at the in-server link, and no pipeline can be priced (review 4 M8).
      w.push_back(fmt::format("{} chips span {} servers of {}, and {} states no scale-out network: their collectives are priced at the "
                              "in-server link, a lower bound on their time (a hardware file with scale_out prices them; no pipeline "
                              "is priced without it)",
                              d.n_chips, (d.n_chips + domain - 1) / domain, domain, d.system.name));
    } else if (tp > domain) {
      const int64_t stages = (d.n_chips + domain - 1) / domain;
      w.push_back(fmt::format("tensor parallelism over {} chips spans {} scale-up domains of {}: every layer's all-reduce crosses the "
                              "scale-out network; a pipeline of {} stages keeps each within one domain (--pp {} of decode, prefill, "
                              "prices forward, serving sweep and simulate), or run replicas of a smaller --weights format",
                              tp, (tp + domain - 1) / domain, domain, stages, stages));
    }
    if (l.overlap_micro_batches && (d.moe.empty() || l.tp_attention >= d.n_chips || l.ep <= 1)) {
      w.push_back("--two-batch-overlap has no expert-parallel traffic to hide here (it needs an MoE model, experts over several chips "
                  "and attention data parallel: --tp below the chips); the step is computed without it");
    }
  }
  return w;
}

std::string human_count(double n) {
  if (n >= 1e12) return fmt::format("{:.2f}T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:.1f}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f}M", n / 1e6);
  return fmt::format("{:.0f}", n);
}

std::string human_bytes(double b) {
  if (b >= 1e12) return fmt::format("{:.2f} TB", b / 1e12);
  if (b >= 1e9) return fmt::format("{:.1f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} KB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

nlohmann::json model_json(const Deployment& d) {
  const auto& p = d.params;
  const ArchitectureParts arch = split_architecture(d.model.architecture, d.model.source);  // as `models` rows give them
  return {{"name", d.model.name},
          {"architecture", arch.type},
          {"source", arch.source},
          {"layers", n_layers(d.model)},
          {"params_total", p.total()},
          {"params_active", p.active()},
          {"params_active_excluding_embedding", p.active_excluding_embedding()},
          {"params_active_matmul", p.active_matmul()},
          {"weights_bytes", d.weight_bytes_total.value()},
          {"max_context_tokens", d.model.max_context}};
}

nlohmann::json model_json(const ModelSpec& m, const SystemSpec& s) {
  DeploymentOptions o;
  o.n_chips = 1;
  return model_json(make_deployment(m, s, o));
}

nlohmann::json hardware_json(const SystemSpec& s) {
  const auto& chip = s.chip;
  nlohmann::json peaks = nlohmann::json::object();
  for (auto mp : {MatmulPrecision::bf16, MatmulPrecision::fp8, MatmulPrecision::int8, MatmulPrecision::fp4}) {
    if (chip.supports(mp)) peaks[std::string(to_string(mp))] = to_tflop_per_s(chip.peak_for(mp));
  }
  return {{"name", s.name},
          {"description", s.description},
          {"chip", chip.name},
          {"source", s.source},
          {"date", s.date},
          {"peak_tflop_per_s", peaks},
          {"hbm_gb_per_chip", to_gb(chip.hbm_capacity)},
          {"memory_type", chip.memory_type},
          {"hbm_tb_per_s_per_chip", to_tb_per_s(chip.hbm_bandwidth)},
          {"scale_up_domain_chips", s.scale_up_domain}};
}

std::string moe_routing_text(const Deployment& d) {
  int64_t experts = 0;
  for (const auto& g : d.model.groups) {
    if (g.ffn.kind == FfnKind::moe) experts = std::max(experts, g.ffn.n_experts);
  }
  const std::string touched = "uniform independent top-k routing: experts touched = E (1 - (1 - k/E)^tokens)";
  if (experts == 0) return touched + "; no routed experts in this model";
  const int64_t ranks = d.mechanisms.enabled ? std::max<int64_t>(1, d.mechanisms.layout.ep) : 1;
  switch (d.mechanisms.expert_balance) {
    case ExpertBalance::learned:
      if (ranks == 1) {
        return "a learned router's skew, experts in order (--eplb no): one EP rank holds every expert, so no rank is busier than the "
               "mean (the skew moves load between experts on the same chip)";
      }
      return fmt::format("a learned router's skew, experts in order (--eplb no): expert popularity lognormal, sigma {:.3f} (TensorRT-LLM tech "
                         "blog 4, DeepSeek-R1 at EP32); the busiest of {} EP ranks gets {:.3g}x the mean share of routed tokens at large "
                         "batch, with a step's sampling noise on top",
                         kLearnedRouterLogSigma, ranks, learned_router_rank_factor(experts, ranks));
    case ExpertBalance::eplb:
      return fmt::format("a learned router's skew with EPLB's redundant experts (--eplb yes): a residual rank spread of {:.3f} (TensorRT-LLM "
                         "tech blog 4, EPLB rows), with a step's sampling noise on top",
                         kEplbResidualRankCv);
    case ExpertBalance::uniform: break;
  }
  return touched + "; the busiest EP rank at the sampling noise only, the lower bound on imbalance (--eplb no prices a learned router's "
                   "skew, --eplb yes EPLB's placement)";
}

nlohmann::json describe_json(const Deployment& d) {
  nlohmann::json j;
  j["model"] = model_json(d);
  j["hardware"] = hardware_json(d.system);
  j["assumptions"] = {{"chips", d.n_chips},
                      {"weights_dtype", {{"embedding", to_string(d.weights.embedding)},
                                         {"attention", to_string(d.weights.attention)},
                                         {"dense_ffn", to_string(d.weights.dense_ffn)},
                                         {"experts", to_string(d.weights.experts)},
                                         {"router_and_norms", to_string(d.weights.router)}}},
                      {"kv_dtype", to_string(d.kv)},
                      {"compute", to_string(d.compute)},
                      {"matmul_efficiency", d.matmul_efficiency},
                      {"matmul_efficiency_source", d.matmul_efficiency_source},
                      {"hbm_efficiency", d.hbm_efficiency},
                      {"hbm_efficiency_source", d.hbm_efficiency_source},
                      {"memory_reserve_fraction", d.memory_reserve_fraction},
                      {"sharding", d.mechanisms.enabled ? "layout: " + d.mechanisms.layout.description
                                                        : std::string("roofline: weights and KV cache spread evenly over the chips; no communication or launch latency (add --mechanisms)")},
                      {"mechanisms", d.mechanisms.enabled},
                      {"moe_routing", moe_routing_text(d)}};
  j["assumptions"]["price_usd_per_chip_hour"] = d.price_per_chip ? nlohmann::json(to_usd_per_hour(*d.price_per_chip)) : nlohmann::json();
  j["assumptions"]["price_source"] = d.price_per_chip ? nlohmann::json(d.price_source) : nlohmann::json("no public price; pass --price-usd-per-chip-hour");
  return j;
}

std::string describe_text(const Deployment& d) {
  const auto& p = d.params;
  const auto& chip = d.system.chip;
  std::string peaks;
  for (auto mp : {MatmulPrecision::bf16, MatmulPrecision::fp8, MatmulPrecision::int8, MatmulPrecision::fp4}) {
    if (chip.supports(mp)) peaks += fmt::format("{}{} {}", peaks.empty() ? "" : ", ", format_number(to_tflop_per_s(chip.peak_for(mp)), 4), to_string(mp));
  }
  std::string s;
  s += fmt::format("model       {} ({}, {} layers): {} params total, {} active ({} excluding the input embedding)\n", d.model.name,
                   d.model.architecture, n_layers(d.model), human_count(p.total()), human_count(p.active()),
                   human_count(p.active_excluding_embedding()));
  s += fmt::format("hardware    {} x {}{}: {} ({} dense TFLOP/s; {} GB {} at {} TB/s per chip)\n", d.n_chips, chip.name,
                   default_hardware_note(), d.system.description, peaks, format_number(to_gb(chip.hbm_capacity), 4), chip.memory_type,
                   format_number(to_tb_per_s(chip.hbm_bandwidth), 4));
  s += fmt::format("formats     weights: attention {}, FFN {}, experts {}, embeddings {}; KV cache {}; matmuls at {} rate\n",
                   to_string(d.weights.attention), to_string(d.weights.dense_ffn), to_string(d.weights.experts),
                   to_string(d.weights.embedding), to_string(d.kv), to_string(d.compute));
  // One or two lines a note, for the run's matmul format (review 11a item 2); --json keeps each
  // in full, with make_deployment's gloss of the sustained clock that the text leaves out.
  std::string matmul_source = d.matmul_efficiency_source;
  constexpr std::string_view kClockGloss = " (efficiency.sustained_clock: the SM clock under sustained load)";
  if (const auto at = matmul_source.find(kClockGloss); at != std::string::npos) matmul_source.erase(at, kClockGloss.size());
  s += fmt::format("efficiency  matmul {:.1f}% of peak ({})\n", 100 * d.matmul_efficiency,
                   short_source_note(matmul_source, to_string(d.compute)));
  s += fmt::format("            HBM {:.1f}% of peak ({})\n", 100 * d.hbm_efficiency, short_source_note(d.hbm_efficiency_source, ""));
  if (d.mechanisms.enabled) {
    s += fmt::format("mechanisms  on: {}; collectives, kernel floor, kernel efficiencies (docs/accuracy.md)\n",
                     d.mechanisms.layout.description);
    if (d.mechanisms.expert_balance != ExpertBalance::uniform) s += "experts     " + moe_routing_text(d) + "\n";
  } else {
    s += "mechanisms  off: the roofline at the achievable rates above (no communication or launch latency)\n";
  }
  if (d.price_per_chip) {
    s += fmt::format("price       ${:.2f} per chip-hour ({})\n", to_usd_per_hour(*d.price_per_chip), d.price_source);
  } else {
    s += "price       none public: pass --price-usd-per-chip-hour for costs\n";
  }
  return s;
}

std::string describe_text_with_warnings(const Deployment& d, int64_t max_context) {
  std::string s = describe_text(d);
  std::vector<std::string> warnings = deployment_warnings(d);
  if (max_context > d.model.max_context) {
    warnings.push_back(fmt::format("context {} exceeds {}'s max_position_embeddings {}", max_context, d.model.name, d.model.max_context));
  }
  const MemoryPlan mem = memory_plan(d, 0, 0);
  if (!mem.weights_fit) {
    warnings.push_back(fmt::format("the weights ({}) and reserve ({}) exceed the {} of HBM on {} chips: the figures assume they fit "
                                   "(add chips with --chips)",
                                   human_bytes(mem.weights.value()), human_bytes(mem.reserve.value()), human_bytes(mem.hbm_total.value()),
                                   d.n_chips));
  }
  for (const auto& w : warnings) s += "warning     " + w + "\n";
  return s;
}

// Choosing the layout for a latency question (layout_choice.h).
std::size_t choose_layout(const std::vector<Deployment>& candidates, const LayoutChooser& chooser, LayoutNote* note) {
  if (candidates.empty()) throw std::logic_error("choose_layout: no candidates");
  std::vector<LayoutScore> scores;
  scores.reserve(candidates.size());
  for (const auto& d : candidates) scores.push_back(chooser.score(d));
  const auto better = [&](std::size_t a, std::size_t b) {
    if (scores[a].usable != scores[b].usable) return scores[a].usable;
    return scores[a].value < scores[b].value;
  };
  std::size_t best = 0;
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    if (better(i, best)) best = i;
  }
  std::optional<std::size_t> second;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (i != best && (!second || better(i, *second))) second = i;
  }
  if (note) {
    note->objective = chooser.objective;
    note->unit = chooser.unit;
    note->candidates = static_cast<int64_t>(candidates.size());
    const auto name = [&](std::size_t i) { return describe_layout(candidates[i].mechanisms.layout, !candidates[i].moe.empty()); };
    note->layout = name(best);
    note->choice = scores[best];
    if (second) {
      note->runner_up_layout = name(*second);
      note->runner_up = scores[*second];
    }
  }
  return best;
}

nlohmann::json layout_note_json(const std::optional<LayoutNote>& note) {
  if (!note) return nullptr;
  const auto score = [](const std::string& layout, const LayoutScore& s) {
    return nlohmann::json{{"layout", layout}, {"score_ms", s.value}, {"overloaded", !s.usable}};
  };
  return {{"objective", note->objective},
          {"layouts_compared", note->candidates},
          {"chosen", score(note->layout, note->choice)},
          {"next_best", note->runner_up_layout ? score(*note->runner_up_layout, *note->runner_up) : nlohmann::json(nullptr)}};
}

std::string layout_note_text(const std::optional<LayoutNote>& note) {
  if (!note) return "";
  std::string s = fmt::format("layout      {} ({}): {}", note->layout, note->choice.summary, note->objective);
  if (note->runner_up_layout) {
    s += fmt::format("; runner-up {} ({})", *note->runner_up_layout, note->runner_up->summary);
  } else {
    s += "; the only layout of these chips that fits";
  }
  return s + "; --tp/--ep set it\n";
}

}  // namespace chalk::cli
