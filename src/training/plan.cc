// Training plans: checks and placement on scale-up domains (docs/training.md, "Plan").
#include "chalk/training/plan.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "chalk/base/error.h"

namespace chalk {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

void positive(int64_t v, const char* field) {
  if (v < 1) throw InputError(field, "expected a degree of 1 or more, got " + str(v));
}

}  // namespace

std::string_view to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::gpipe: return "gpipe";
    case PipelineSchedule::one_f_one_b: return "1f1b";
    case PipelineSchedule::interleaved: return "interleaved";
    case PipelineSchedule::zb_h1: return "zb-h1";
    case PipelineSchedule::zb_v: return "zb-v";
    case PipelineSchedule::dualpipe: return "dualpipe";
  }
  return "?";
}

PipelineSchedule parse_schedule(std::string_view t, const std::string& field) {
  for (auto s : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved, PipelineSchedule::zb_h1,
                 PipelineSchedule::zb_v, PipelineSchedule::dualpipe}) {
    if (t == to_string(s)) return s;
  }
  throw InputError(field, "expected gpipe, 1f1b, interleaved, zb-h1, zb-v or dualpipe, got '" + std::string(t) + "'");
}

std::string_view to_string(EpDispatcher d) {
  switch (d) {
    case EpDispatcher::deepep: return "deepep";
    case EpDispatcher::all_to_all: return "alltoall";
  }
  return "?";
}

EpDispatcher parse_ep_dispatcher(std::string_view text, const std::string& field) {
  std::string t(text);
  for (auto& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));  // DeepEP, AllToAll
  if (t == "deepep" || t == "flex" || t == "hybridep") return EpDispatcher::deepep;
  if (t == "alltoall") return EpDispatcher::all_to_all;
  throw InputError(field, "expected deepep (flex, hybridep) or alltoall, got '" + std::string(text) + "'");
}

std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

Recompute parse_recompute(std::string_view t, const std::string& field) {
  for (auto r : {Recompute::none, Recompute::selective, Recompute::full}) {
    if (t == to_string(r)) return r;
  }
  throw InputError(field, "expected none, selective or full, got '" + std::string(t) + "'");
}

namespace {
constexpr std::pair<const char*, unsigned> kModules[] = {
    {"layernorm", kRecomputeLayernorm}, {"mla_up_proj", kRecomputeMlaUpProj}, {"moe_act", kRecomputeMoeAct}};
}  // namespace

unsigned parse_recompute_modules(std::string_view t, const std::string& field) {
  unsigned out = 0;
  while (!t.empty()) {
    const size_t comma = t.find(',');
    const std::string_view name = t.substr(0, comma);
    bool known = false;
    for (const auto& [n, flag] : kModules) {
      if (name == n) {
        out |= flag;
        known = true;
      }
    }
    if (!known) throw InputError(field, "unknown module '" + excerpt(name) + "'; expected a comma-separated subset of layernorm, mla_up_proj, moe_act");
    if (comma == std::string_view::npos) break;
    t.remove_prefix(comma + 1);
  }
  return out;
}

std::string recompute_modules_string(unsigned modules) {
  std::string s;
  for (const auto& [n, flag] : kModules) {
    if (!(modules & flag)) continue;
    if (!s.empty()) s += ',';
    s += n;
  }
  return s;
}

std::string_view to_string(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::delayed: return "delayed";
    case Fp8Recipe::tensorwise: return "tensorwise";
    case Fp8Recipe::mxfp8: return "mxfp8";
    case Fp8Recipe::blockwise: return "blockwise";
  }
  return "?";
}

Fp8Recipe parse_fp8_recipe(std::string_view t, const std::string& field) {
  for (auto r : {Fp8Recipe::delayed, Fp8Recipe::tensorwise, Fp8Recipe::mxfp8, Fp8Recipe::blockwise}) {
    if (t == to_string(r)) return r;
  }
  throw InputError(field, "expected delayed, tensorwise, mxfp8 or blockwise, got '" + excerpt(t) + "'");
}

StateBytes parse_state_bytes(std::string_view t, const std::string& field) {
  if (t == "adam16") return {2, 2, 12, "adam16"};
  if (t == "adam18") return {2, 4, 12, "adam18"};
  if (t == "adam-bf16-moments") return {2, 4, 8, "adam-bf16-moments"};
  throw InputError(field, "expected adam16, adam18 or adam-bf16-moments, got '" + std::string(t) + "'");
}

int64_t plan_chips(const TrainingPlan& p) { return p.dp * p.tp * p.pp * p.cp; }

Placement check_plan(const ModelSpec& m, const SystemSpec& s, int64_t chips, const TrainingPlan& p) {
  positive(p.dp, "dp");
  positive(p.tp, "tp");
  positive(p.pp, "pp");
  positive(p.cp, "cp");
  positive(p.ep, "ep");
  positive(p.etp, "etp");
  positive(p.virtual_stages, "virtual_stages");
  if (p.zero_stage < 0 || p.zero_stage > 3) throw InputError("zero_stage", "expected 0, 1, 2 or 3, got " + str(p.zero_stage));
  if (p.seq_len < 1) throw InputError("seq_len", "expected 1 or more tokens, got " + str(p.seq_len));
  if (p.microbatch < 1) throw InputError("microbatch", "expected 1 or more sequences, got " + str(p.microbatch));
  if (p.global_batch < 1) throw InputError("global_batch", "expected 1 or more sequences, got " + str(p.global_batch));
  if (plan_chips(p) != chips) {
    throw InputError("chips", fmt::format("dp x tp x pp x cp = {} x {} x {} x {} = {}, but the cluster has {} chips", p.dp, p.tp, p.pp,
                                          p.cp, plan_chips(p), chips));
  }
  if (m.groups.empty()) throw InputError("model", "has no layers");
  for (const auto& g : m.groups) {
    const auto& a = g.attention;
    if (a.n_heads % p.tp != 0) {
      throw InputError("tp", fmt::format("{} does not divide the {} query heads of {}", p.tp, a.n_heads, m.name));
    }
    if (a.kind == AttentionKind::gqa && a.n_kv_heads % p.tp != 0 && p.tp % a.n_kv_heads != 0) {
      throw InputError("tp", fmt::format("{} neither divides nor is a multiple of the {} KV heads of {}", p.tp, a.n_kv_heads, m.name));
    }
    if (g.ffn.kind == FfnKind::moe && g.ffn.n_experts % p.ep != 0) {
      throw InputError("ep", fmt::format("{} does not divide the {} routed experts of {}", p.ep, g.ffn.n_experts, m.name));
    }
  }
  bool moe = false;
  for (const auto& g : m.groups) moe = moe || g.ffn.kind == FfnKind::moe;
  if (!moe && (p.ep > 1 || p.etp > 1)) {
    throw InputError(p.ep > 1 ? "ep" : "etp", fmt::format("{} has no routed experts to split (a dense model takes ep = etp = 1)", m.name));
  }
  if ((p.tp * p.cp * p.dp) % (p.ep * p.etp) != 0) {
    throw InputError("ep", fmt::format("ep x etp = {} x {} must divide the tp x cp x dp = {} ranks of a stage", p.ep, p.etp,
                                       p.tp * p.cp * p.dp));
  }
  if (p.seq_len % p.cp != 0) throw InputError("cp", fmt::format("{} does not divide the sequence length {}", p.cp, p.seq_len));
  const int64_t chunks = p.schedule == PipelineSchedule::interleaved ? p.virtual_stages
                         : (p.schedule == PipelineSchedule::zb_v || p.schedule == PipelineSchedule::dualpipe) ? 2
                                                                                                               : 1;
  if (p.virtual_stages > 1 && p.schedule != PipelineSchedule::interleaved) {
    throw InputError("virtual_stages", fmt::format("{} chunks per rank needs the interleaved schedule, not {}", p.virtual_stages,
                                                   to_string(p.schedule)));
  }
  const int64_t L = n_layers(m);
  const int64_t padded = L + 2 + m.n_mtp_layers;
  const int64_t parts = p.pp * chunks;
  if (padded < parts) {
    throw InputError("pp", fmt::format("pp x chunks = {} x {} = {} pipeline chunks, but {} has only {} slots ({} layers, the "
                                       "embedding, the LM head and {} MTP modules); expected at most {} chunks",
                                       p.pp, chunks, parts, m.name, padded, L, m.n_mtp_layers, padded));
  }
  if (p.global_batch % (p.dp * p.microbatch) != 0) {
    throw InputError("global_batch", fmt::format("{} sequences are not a multiple of dp x microbatch = {} x {} = {}", p.global_batch,
                                                 p.dp, p.microbatch, p.dp * p.microbatch));
  }
  const int64_t micro = p.global_batch / (p.dp * p.microbatch);
  if (p.pp > 1 && p.schedule == PipelineSchedule::interleaved && micro % p.pp != 0) {
    throw InputError("microbatch", fmt::format("the interleaved schedule needs microbatches per step ({}) to be a multiple of pp ({})",
                                               micro, p.pp));
  }
  if (p.schedule == PipelineSchedule::dualpipe && (p.pp % 2 != 0 || micro % 2 != 0)) {
    throw InputError("pp", fmt::format("dualpipe needs pp ({}) and microbatches per step ({}) even", p.pp, micro));
  }
  if (p.fp8_recipe != Fp8Recipe::delayed && p.compute != MatmulPrecision::fp8) {
    throw InputError("fp8_recipe", fmt::format("{} scales FP8 GEMMs; the plan's compute is {} (expected fp8)", to_string(p.fp8_recipe),
                                               to_string(p.compute)));
  }
  if (p.ep_overlap) {
    // Megatron-Core asserts these (Megatron-Bridge docs/training/communication-overlap.md,
    // "Common Failure Modes").
    if (p.ep <= 1) throw InputError("ep_overlap", "overlaps expert-parallel all-to-alls; the plan has ep 1");
    if (p.pp > 1 && p.schedule != PipelineSchedule::interleaved) {
      throw InputError("ep_overlap", fmt::format("with pp {} needs the interleaved schedule (Megatron-Core's EP overlap pairs chunks of "
                                                 "a virtual pipeline), got {}", p.pp, to_string(p.schedule)));
    }
    if (p.recompute == Recompute::full) throw InputError("ep_overlap", "is not available with full recomputation (Megatron-Core asserts)");
  }
  if (p.schedule == PipelineSchedule::dualpipe && micro < 2 * p.pp) {
    // deepseek-ai/DualPipe dualpipe.py, DualPipe.step: assert num_chunks >= num_ranks * 2.
    throw InputError("microbatch", fmt::format("dualpipe needs at least 2 x pp = {} microbatches per step, got {} (global batch / "
                                               "(dp x microbatch))", 2 * p.pp, micro));
  }
  return place_plan(L, padded, s.scale_up_domain, p);
}

Placement place_plan(int64_t L, int64_t padded, int64_t domain, const TrainingPlan& p) {
  Placement out;
  out.chunks = p.schedule == PipelineSchedule::interleaved ? p.virtual_stages
               : (p.schedule == PipelineSchedule::zb_v || p.schedule == PipelineSchedule::dualpipe) ? 2
                                                                                                     : 1;
  const int64_t parts = p.pp * out.chunks;
  // An even split of the layers, else of the slots (the embedding, the LM head and each MTP
  // module a layer's slot), else an uneven split of the slots whose busiest rank holds
  // ceil(slots / pp) of them (Megatron-Core's pipeline_model_parallel_layout places any
  // number of layers on a stage; the engine's inference pipelines split the same way).
  out.uneven = L % parts != 0 && padded % parts != 0;
  out.layers_per_stage = L % parts == 0 ? L / p.pp : out.uneven ? (padded + p.pp - 1) / p.pp : padded / p.pp;
  out.microbatches = p.global_batch / (p.dp * p.microbatch);
  const int64_t chips = plan_chips(p);
  // Placement: ranks ordered tp, cp, dp, pp (Megatron-Core); a group of span ranks
  // stays in a domain when span <= domain.
  const int64_t D = std::max<int64_t>(1, domain);
  out.domain = D;
  out.tp_in_domain = p.tp <= D;
  out.cp_in_domain = p.tp * p.cp <= D;
  out.dp_in_domain = p.tp * p.cp * p.dp <= D;
  out.pp_in_domain = chips <= D;
  out.ep_in_domain = p.ep * p.etp <= D;
  out.dp_ranks_per_domain = std::clamp<int64_t>(D / (p.tp * p.cp), 1, p.dp);
  while (p.dp % out.dp_ranks_per_domain != 0) --out.dp_ranks_per_domain;
  out.ep_ranks_per_domain = std::clamp<int64_t>(D / p.etp, 1, p.ep);
  while (p.ep % out.ep_ranks_per_domain != 0) --out.ep_ranks_per_domain;
  std::string in, out_s;
  auto put = [&](bool inside, const std::string& what) { (inside ? in : out_s) += (inside ? in : out_s).empty() ? what : ", " + what; };
  if (p.tp > 1) put(out.tp_in_domain, "TP" + str(p.tp));
  if (p.cp > 1) put(out.cp_in_domain, "CP" + str(p.cp));
  if (p.ep > 1) put(out.ep_in_domain, "EP" + str(p.ep));
  if (p.dp > 1) put(out.dp_in_domain, "DP" + str(p.dp));
  if (p.pp > 1) put(out.pp_in_domain, "PP" + str(p.pp));
  out.description = (in.empty() ? std::string() : in + " inside a scale-up domain") + (in.empty() || out_s.empty() ? "" : "; ") +
                    (out_s.empty() ? std::string() : out_s + " across the scale-out network");
  if (out.description.empty()) out.description = "one chip";
  return out;
}

std::string describe_plan(const TrainingPlan& p) {
  std::string s = fmt::format("DP{} TP{}{} PP{}", p.dp, p.tp, p.sequence_parallel && p.tp > 1 ? "+SP" : "", p.pp);
  if (p.pp > 1) {
    s += fmt::format(" ({}{})", to_string(p.schedule), p.schedule == PipelineSchedule::interleaved ? " v" + str(p.virtual_stages) : "");
  }
  if (p.cp > 1) s += " CP" + str(p.cp);
  if (p.ep > 1 || p.etp > 1) s += fmt::format(" EP{}", p.ep) + (p.etp > 1 ? fmt::format("xETP{}", p.etp) : "");
  s += fmt::format(", ZeRO-{}, mb {}, recompute {}", p.zero_stage, p.microbatch, to_string(p.recompute));
  if (p.recompute_modules) s += " + " + recompute_modules_string(p.recompute_modules);
  if (p.reversible) s += ", reversible";
  if (p.compute == MatmulPrecision::fp8 && p.fp8_recipe != Fp8Recipe::delayed) s += ", FP8 " + std::string(to_string(p.fp8_recipe));
  if (!p.compile) s += ", eager";
  return s;
}

}  // namespace chalk
