#include "deployment_options.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/default_layout.h"
#include "chalk/io/io.h"
#include "pipeline_cli.h"
#include "table.h"

namespace chalk::cli {
namespace {
bool best_is_moe(const ModelSpec& m) {
  for (const auto& g : m.groups) {
    if (g.ffn.kind == FfnKind::moe) return true;
  }
  return false;
}
}  // namespace

void add_deployment_options(CLI::App& app, DeploymentArgs& a, bool layout_flags) {
  app.add_option("-m,--model", a.model, "Built-in model name (see `chalk models`) or path to a HF config.json / chalk-model file")
      ->capture_default_str();
  app.add_option("-H,--hardware", a.hardware, "Built-in system name (see `chalk hardware`) or path to a chalk-hardware file")
      ->capture_default_str();
  app.add_option("-n,--chips", a.chips, "Chips holding one replica, 1..1048576 (default, printed as `replica`: for costs and throughput the cheapest replica size within the scale-up domain; for decode and simulate the smallest that holds the weights and one sequence)")
      ->check(CLI::Range(int64_t{1}, max_chips).description(""));
  app.add_option("--weights", a.weights, "Weight format for attention/FFN/experts: bf16, fp16, fp8, int8, mxfp4, nvfp4, int4 (default: the checkpoint's)");
  app.add_option("--kv-dtype", a.kv, "KV-cache format: bf16, fp16, fp8, int8, mxfp4, nvfp4, int4")->capture_default_str();
  app.add_option("--compute", a.compute, "Matmul rate class: bf16, fp8, int8, fp4 (default: the weights' if the chip has it, else bf16)");
  app.add_option("--matmul-efficiency", a.matmul_efficiency, "Override the achievable fraction of peak FLOP/s (0-1]");
  app.add_option("--hbm-efficiency", a.hbm_efficiency, "Override the achievable fraction of peak HBM bandwidth (0-1]");
  app.add_option("--price-usd-per-chip-hour", a.price_usd_per_chip_hour, "Override the rental price per chip-hour");
  app.add_option("--memory-reserve", a.memory_reserve, "Fraction of HBM held back for activations and runtime [0-1)")
      ->capture_default_str();
  if (!layout_flags) return;
  auto* roofline = app.add_flag("--roofline", a.roofline,
                                 "The lecture's pure roofline, a lower bound: no collectives, kernel floor or kernel efficiencies "
                                 "(default: the engine step, docs/accuracy.md)");
  auto* mech = app.add_flag("--mechanisms", a.mechanisms, "Accepted for compatibility: the engine step is now the default");
  roofline->excludes(mech);
  app.add_option("--tp", a.tp,
                 "Tensor-parallel degree of attention and dense FFNs; 1 = data-parallel attention (default: the layout "
                 "search's best for the chips; see `chalk layouts`)");
  app.add_option("--ep", a.ep, "Expert-parallel degree of routed experts (default: the layout search's best)");
  app.add_flag("--two-batch-overlap", a.two_batch_overlap,
               "Two micro-batches hide expert-parallel traffic behind compute (DeepSeek/SGLang; needs --tp below the "
               "chips; a decode step splits only when every data-parallel rank holds 2+ sequences)");
  app.add_option("--dispatch-dtype", a.dispatch_dtype,
                 "Format of the expert-parallel dispatch: bf16, fp8, nvfp4, ... (default: bf16; the combine stays bf16)");
}

void add_infeasible_option(CLI::App& app, DeploymentArgs& a) {
  app.add_flag("--allow-infeasible", a.allow_infeasible,
               "Print the figures even when the stated chips cannot hold the weights (default: exit 2 naming the smallest replica that fits)");
}

void add_output_options(CLI::App& app, OutputArgs& o) {
  auto* j = app.add_flag("--json", o.json, "Print JSON");
  auto* c = app.add_flag("--csv", o.csv, "Print CSV");
  j->excludes(c);
  app.add_flag("--wide", wide_tables(), "Print every column of the table (default: what fits the terminal, 100 columns without one)");
}

DeploymentOptions options_from(const DeploymentArgs& a) {
  DeploymentOptions o;
  if (!a.weights.empty()) o.weights = parse_dtype(a.weights, "--weights");
  o.kv = parse_dtype(a.kv, "--kv-dtype");
  if (!a.compute.empty()) o.compute = parse_matmul_precision(a.compute, "--compute");
  o.matmul_efficiency = a.matmul_efficiency;
  o.hbm_efficiency = a.hbm_efficiency;
  if (a.price_usd_per_chip_hour) {
    if (!(*a.price_usd_per_chip_hour > 0) || !std::isfinite(*a.price_usd_per_chip_hour)) {
      throw InputError("--price-usd-per-chip-hour", "must be a positive number, got " + format_number(*a.price_usd_per_chip_hour, 4));
    }
    o.price_per_chip = usd_per_hour(*a.price_usd_per_chip_hour);
  }
  o.memory_reserve_fraction = a.memory_reserve;
  if ((a.tp || a.ep) && a.roofline) throw InputError(a.tp ? "--tp" : "--ep", "sets the engine step's layout; the roofline has none (drop --roofline)");
  if (a.two_batch_overlap && a.roofline) throw InputError("--two-batch-overlap", "sets the engine step's layout; the roofline has none (drop --roofline)");
  if (a.dispatch_dtype && a.roofline) throw InputError("--dispatch-dtype", "sets the engine step's layout; the roofline has none (drop --roofline)");
  if (a.tp && *a.tp < 1) throw InputError("--tp", "must be >= 1, got " + std::to_string(*a.tp));
  if (a.ep && *a.ep < 1) throw InputError("--ep", "must be >= 1, got " + std::to_string(*a.ep));
  o.mechanisms.enabled = !a.roofline;
  o.mechanisms.layout.tp_attention = a.tp.value_or(0);
  o.mechanisms.layout.ep = a.ep.value_or(0);
  o.mechanisms.layout.overlap_micro_batches = a.two_batch_overlap;
  if (a.dispatch_dtype) o.mechanisms.layout.dispatch_bytes_per_element = bytes_per_element(parse_dtype(*a.dispatch_dtype, "--dispatch-dtype"));
  return o;
}

namespace {
/// Stated chips that cannot hold the weights and the reserve are an error (issue 30:
/// `decode -m llama-3.1-70b -H h100 -n 1` printed "WEIGHTS DO NOT FIT" over a full table with
/// exit 0, and -n 3 silently ran three one-chip copies of 141 GB each). Names the need, what
/// the chips hold, the layout that was possible, and the smallest replica that fits.
void refuse_if_weights_do_not_fit(const Deployment& d, const ModelSpec& model, const SystemSpec& system, const DeploymentOptions& engine,
                                  int64_t context) {
  const MemoryPlan mem = memory_plan(d, 1, context);
  if (mem.weights_fit) return;
  std::string fix;
  try {
    const int64_t n = smallest_replica_chips(model, system, engine, context);
    fix = fmt::format("the smallest replica that holds them is {} chips (-n {})", n, n);
  } catch (const InputError&) {
    fix = "no replica of " + system.name + " holds them: use a smaller --weights format";
  }
  const std::string layout = d.mechanisms.enabled ? describe_layout(d.mechanisms.layout, !d.moe.empty()) : "the roofline's even split";
  const double n = static_cast<double>(std::max<int64_t>(d.n_chips, 1));
  throw InputError("--chips", fmt::format("{} x {} cannot hold {}'s weights: {} of weights per chip as laid out ({}) and {} held back, "
                                          "against {} of HBM per chip; {}; --allow-infeasible prints the figures anyway",
                                          d.n_chips, system.chip.name, model.name, human_bytes(mem.weights.value() / n), layout,
                                          human_bytes(mem.reserve.value() / n), human_bytes(mem.hbm_total.value() / n), fix));
}
}  // namespace

Deployment resolve(const DeploymentArgs& a, int64_t context, std::optional<ReplicaNote>* note) {
  return resolve_model(load_model(a.model), a, context, note);
}

namespace {
/// The deployment `d` at the batch that fills its HBM at `context` (capped at 2^24
/// sequences, as the frontier caps it): the point the replica rule compares.
ModePoint replica_memory_full_point(const Deployment& d, int64_t context) {
  ModePoint p;
  p.n_chips = d.n_chips;
  p.layout = d.mechanisms.enabled ? d.mechanisms.layout.description : std::string();
  p.batch = std::clamp<int64_t>(memory_plan(d, 0, context).max_batch, 1, int64_t{1} << 24);
  p.step = decode_step(d, p.batch, context);
  p.tokens_per_s_per_user = p.step.tokens_per_s_per_user;
  p.tokens_per_s_per_chip = p.step.tokens_per_s_per_chip;
  p.cost_per_token = p.step.cost_per_token;
  return p;
}
}  // namespace

Deployment resolve_model(const ModelSpec& model, const DeploymentArgs& a, int64_t context, std::optional<ReplicaNote>* note_out) {
  const SystemSpec system = load_system(a.hardware);
  if (a.chips < 0) throw InputError("--chips", "must be >= 1, got " + std::to_string(a.chips));
  DeploymentOptions o = options_from(a);
  const int64_t search_context = std::max<int64_t>(context, 1);
  try {
    DeploymentOptions engine = o;
    engine.mechanisms.enabled = true;
    const bool stated = a.tp || a.ep || a.two_batch_overlap;
    std::optional<ReplicaNote> note;
    if (a.chips != 0) {
      o.n_chips = a.chips;
    } else {
      note.emplace();
      note->rule = a.replica_rule;
      note->context = search_context;
      // The cheapest replica within the scale-up domain (the frontier's search), compared
      // under the engine step whatever view prints the figures.
      std::optional<ReplicaChoice> cheapest;
      std::string no_cheapest;
      try {
        cheapest = cheapest_replica(model, system, engine, search_context);
        note->replica_sizes = cheapest->replica_sizes;
      } catch (const InputError& e) {
        no_cheapest = e.what();
      }
      if (a.replica_rule == ReplicaRule::cheapest && cheapest) {
        o.n_chips = cheapest->choice.n_chips;
        note->runner_up = cheapest->runner_up;
      } else {
        try {
          o.n_chips = smallest_replica_chips(model, system, engine, search_context);
        } catch (const InputError&) {
          // A stated degree no replica size suits: the scale-up domain, where make_deployment
          // names what is wrong with it.
          if (!stated) throw;
          o.n_chips = system.scale_up_domain;
        }
        if (a.replica_rule == ReplicaRule::cheapest) {
          note->fallback = fmt::format("no replica within the scale-up domain of {} chips serves it ({}): the smallest replica that "
                                       "holds it instead",
                                       system.scale_up_domain, no_cheapest);
        } else if (cheapest && cheapest->choice.n_chips != o.n_chips) {
          note->runner_up = cheapest->choice;
        }
      }
    }
    if (o.mechanisms.enabled && !stated) {
      const ReplicaLayouts found = replica_layouts(model, system, o, o.n_chips, search_context);
      if (const auto& best = found.single) {
        const double dispatch = o.mechanisms.layout.dispatch_bytes_per_element;
        o.mechanisms.layout = best->layout;
        o.mechanisms.layout.dispatch_bytes_per_element = dispatch;
        o.mechanisms.layout.description =
            fmt::format("searched: {} (most decode tok/s per chip at context {} with the batch HBM holds; `chalk layouts` ranks them)",
                        describe_layout(best->layout, best_is_moe(model)), search_context);
        if (found.pipeline) {
          o.mechanisms.layout.description += fmt::format("; a pipeline, {}, serves more tok/s per chip on these chips: --pp {}",
                                                         found.pipeline->name, found.pipeline->pp);
        }
      }
    }
    Deployment d = make_deployment(model, system, o);
    if (a.chips != 0 && !a.allow_infeasible) refuse_if_weights_do_not_fit(d, model, system, engine, search_context);
    if (note) {
      note->choice = replica_memory_full_point(d, search_context);
      if (note_out) *note_out = std::move(note);
    }
    return d;
  } catch (const InputError& e) {
    // Name the option the user typed, not the library's layout field.
    const std::string& f = e.field();
    const std::string message = std::string(e.what()).substr(f.size() + 2);
    if (f == "layout.tp_attention") throw InputError("--tp", message);
    if (f == "layout.ep") throw InputError("--ep", message);
    if (f == "chips") throw InputError("--chips", message);
    throw;
  }
}

Deployment roofline_of(const Deployment& d) {
  Deployment r = d;
  r.mechanisms.enabled = false;
  return r;
}

std::string_view view_name(const Deployment& d) { return d.mechanisms.enabled ? "engine step" : "roofline"; }

std::vector<std::string> deployment_warnings(const Deployment& d) {
  std::vector<std::string> w;
  if (d.n_chips > d.system.scale_up_domain && !d.mechanisms.enabled) {
    w.push_back(fmt::format("{} chips span {} scale-up domains of {}: their collectives would cross the scale-out network "
                            "(about 8x slower, lecture 39:00), which the roofline does not model (drop --roofline)",
                            d.n_chips, (d.n_chips + d.system.scale_up_domain - 1) / d.system.scale_up_domain, d.system.scale_up_domain));
  }
  if (d.mechanisms.enabled) {
    const std::string problem = attention_split_problem(d.model, d.mechanisms.layout.tp_attention);
    if (!problem.empty()) {
      w.push_back(problem + ": serving engines refuse this split (pad the heads, as Pope et al. 2022 did, or see `chalk layouts`)");
    }
    const auto& l = d.mechanisms.layout;
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
  return {{"name", d.model.name},
          {"architecture", d.model.architecture},
          {"source", d.model.source},
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
          {"hbm_tb_per_s_per_chip", to_tb_per_s(chip.hbm_bandwidth)},
          {"scale_up_domain_chips", s.scale_up_domain}};
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
                      {"moe_routing", "uniform independent top-k routing: experts touched = E (1 - (1 - k/E)^tokens)"}};
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
  s += fmt::format("hardware    {} x {}: {} ({} dense TFLOP/s; {} GB HBM at {} TB/s per chip)\n", d.n_chips, chip.name,
                   d.system.description, peaks, format_number(to_gb(chip.hbm_capacity), 4),
                   format_number(to_tb_per_s(chip.hbm_bandwidth), 4));
  s += fmt::format("formats     weights: attention {}, FFN {}, experts {}, embeddings {}; KV cache {}; matmuls at {} rate\n",
                   to_string(d.weights.attention), to_string(d.weights.dense_ffn), to_string(d.weights.experts),
                   to_string(d.weights.embedding), to_string(d.kv), to_string(d.compute));
  s += fmt::format("efficiency  matmul {:.1f}% of peak ({})\n", 100 * d.matmul_efficiency, d.matmul_efficiency_source);
  s += fmt::format("            HBM {:.1f}% of peak ({})\n", 100 * d.hbm_efficiency, d.hbm_efficiency_source);
  if (d.mechanisms.enabled) {
    s += fmt::format("mechanisms  on: {}; collectives, kernel floor, kernel efficiencies (docs/accuracy.md)\n",
                     d.mechanisms.layout.description);
  } else {
    s += "mechanisms  off: the roofline, a lower bound (no communication, no launch latency; --mechanisms adds them)\n";
  }
  if (d.price_per_chip) {
    s += fmt::format("price       ${:.2f} per chip-hour ({})\n", to_usd_per_hour(*d.price_per_chip), d.price_source);
  } else {
    s += "price       none public: pass --price-usd-per-chip-hour for costs\n";
  }
  return s;
}

namespace {
nlohmann::json replica_point_json(const ModePoint& p) {
  return {{"chips", p.n_chips},
          {"layout", p.layout.empty() ? nlohmann::json() : nlohmann::json(p.layout)},
          {"batch", p.batch},
          {"t_step_ms", to_ms(p.step.t_step)},
          {"tok_per_s_per_user", p.tokens_per_s_per_user.value()},
          {"tok_per_s_per_chip", p.tokens_per_s_per_chip.value()},
          {"cost_usd_per_mtok", p.cost_per_token ? nlohmann::json(to_usd_per_mtok(*p.cost_per_token)) : nlohmann::json()},
          {"memory_full", true}};
}

std::string replica_point_text(const ModePoint& p) {
  std::string s = fmt::format("{} chips at batch {} (fills HBM): {} tok/s per chip, {} tok/s per user", p.n_chips, p.batch,
                              format_number(p.tokens_per_s_per_chip.value(), 4), format_number(p.tokens_per_s_per_user.value(), 3));
  if (p.cost_per_token) s += fmt::format(", ${}/Mtok", format_number(to_usd_per_mtok(*p.cost_per_token), 4));
  return s;
}

std::string replica_rule_text(const ReplicaNote& n) {
  if (!n.fallback.empty()) return n.fallback;
  if (n.rule == ReplicaRule::smallest) {
    return "the smallest replica that holds the weights and one sequence: the fastest small-batch step, for latency questions";
  }
  std::string sizes;
  for (int64_t s : n.replica_sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
  return fmt::format("the cheapest replica size at context {} of {} chips, each with its best layout at the batch that fills "
                     "its HBM (the cost floor of `chalk serving modes`)",
                     n.context, sizes);
}
}  // namespace

nlohmann::json replica_note_json(const std::optional<ReplicaNote>& note) {
  if (!note) return nullptr;
  const ReplicaNote& n = *note;
  return {{"rule", n.rule == ReplicaRule::cheapest && n.fallback.empty() ? "cheapest" : "smallest"},
          {"why", replica_rule_text(n)},
          {"context_tokens", n.context},
          {"replica_sizes", n.replica_sizes},
          {"choice", replica_point_json(n.choice)},
          {"runner_up", n.runner_up ? replica_point_json(*n.runner_up) : nlohmann::json()}};
}

std::string replica_note_text(const std::optional<ReplicaNote>& note) {
  if (!note) return "";
  const ReplicaNote& n = *note;
  std::string s = fmt::format("replica     {} chips: {}; -n sets the chips\n", n.choice.n_chips, replica_rule_text(n));
  s += "            chosen " + replica_point_text(n.choice) + "\n";
  if (n.runner_up) {
    s += fmt::format("            {} {}\n", n.rule == ReplicaRule::cheapest ? "runner-up" : "cheapest", replica_point_text(*n.runner_up));
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

}  // namespace chalk::cli
