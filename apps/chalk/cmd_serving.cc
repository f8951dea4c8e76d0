// `chalk serving ...`: serving economics over batch, context and chips per replica
// (lecture 0:00-27:38). Subcommands: sweep, balance, window, frontier, modes, plot. A thin
// front end over chalk/serving/serving.h: parse, call, print.
// This file: the options, the helpers the subcommands share and the registration; the
// subcommands live in cmd_serving_<concept>.cc (see serving_cli.h).
#include <algorithm>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "arg_parse.h"
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/serving/serving.h"
#include "envelope.h"
#include "commands.h"
#include "deployment_options.h"
#include "pipeline_cli.h"
#include "serving_cli.h"
#include "table.h"

namespace chalk::cli {
namespace serving_cli {

// ---------------------------------------------------------------------------------------
// Options.

void add_draft_options(CLI::App& cmd, LeverArgs& l) {
  cmd.add_option("--draft", l.draft, "Speculative decoding / MTP: tokens drafted per step (0..64); needs --acceptance or --accepted-tokens, "
                 "except DeepSeek-V3/R1's own MTP module (default acceptance 0.875, the V3 report's 85-90%)")
      ->capture_default_str();
  cmd.add_option("--acceptance", l.acceptance, "Probability each drafted token is accepted [0-1] (DeepSeek-V3's MTP: 0.85-0.9)");
  cmd.add_option("--accepted-tokens", l.accepted_tokens,
                 "A measured mean of tokens kept per step, the verified token included, in [1, 1 + draft] (instead of --acceptance)");
  cmd.add_option("--drafter", l.drafter,
                 "Who drafts, priced in every step: mtp (the model's MTP module, the default when it has one), eagle or eagle3 (an "
                 "EAGLE head: one layer like the model's last, with its LM head), a draft model name or path, or none (free drafts)");
}

void add_lever_options(CLI::App& cmd, LeverArgs& l) {
  add_draft_options(cmd, l);
  cmd.add_option("--sparse-top-k", l.sparse_top_k, "Sparse attention: each query reads this many KV tokens (DSA: 2048)");
  cmd.add_option("--sparse-sqrt", l.sparse_sqrt, "Sparse attention: each query reads ceil(C sqrt(context)) KV tokens");
}

ServingLevers levers_of(const LeverArgs& l, const DeploymentArgs& deployment) {
  ServingLevers s;
  s.draft_tokens = l.draft;
  if (l.acceptance && l.accepted_tokens) throw InputError("--accepted-tokens", "give --acceptance or --accepted-tokens, not both");
  if (l.acceptance && l.draft == 0) throw InputError("--acceptance", "has no effect without --draft >= 1");
  if (l.accepted_tokens && l.draft == 0) throw InputError("--accepted-tokens", "has no effect without --draft >= 1");
  if (!l.drafter.empty() && l.draft == 0) throw InputError("--drafter", "has no effect without --draft >= 1");
  s.acceptance = l.acceptance.value_or(0);
  if (l.accepted_tokens) {
    if (!(*l.accepted_tokens >= 1)) throw InputError("--accepted-tokens", "mean tokens kept per step must be >= 1, got " + fmt::format("{}", *l.accepted_tokens));
    s.accepted_tokens = *l.accepted_tokens;
  }
  if (l.draft > 0) {
    if (l.drafter == "none") {
      s.drafter = Drafter::none;
    } else if (l.drafter == "eagle" || l.drafter == "eagle3") {
      // An EAGLE head (EAGLE, arXiv 2401.15077; EAGLE-3, arXiv 2503.01840): one decoder
      // layer over the target's features with the target's LM head, priced as the MTP
      // module's pass is (Deployment::mtp: one more layer like the model's last with its LM
      // head), on any model. Its acceptance is the checkpoint's: it must be stated.
      s.drafter = Drafter::mtp;
      s.eagle_head = l.drafter;
    } else if (l.drafter.empty() || l.drafter == "mtp") {
      const ModelSpec target = load_model(deployment.model);
      if (target.n_mtp_layers < 1) {
        throw InputError("--drafter", target.name + " ships no MTP module (num_nextn_predict_layers 0); draft with an EAGLE head "
                                      "(--drafter eagle3), a smaller model of its family (--drafter NAME or a config.json), or give --drafter none to "
                                      "price the drafts as free");
      }
      // DeepSeek-V3 ships one module; more drafts than modules reuse it, one pass each.
      s.drafter = Drafter::mtp;
      // Its published acceptance when none is stated (DeepSeek-V3 report 5.4.3; serving.h).
      const auto published = published_mtp_acceptance(target);
      if (published && !l.acceptance && !l.accepted_tokens) {
        s.acceptance = *published;
        s.acceptance_published = true;
      }
    } else {
      // The draft model's errors name --drafter, the flag that gave it (review: they said --model).
      const ModelSpec draft = [&] {
        try {
          return load_model(l.drafter);
        } catch (const InputError& e) {
          if (e.field() != "--model") throw;
          throw InputError("--drafter", std::string(e.what()).substr(e.field().size() + 2));
        }
      }();
      const DType weights = deployment.weights.empty() ? draft.weights.dense_ffn : parse_dtype(deployment.weights, "--weights");
      s.drafter = Drafter::model;
      s.draft_model = draft_model_cost(draft, weights, parse_dtype(deployment.kv, "--kv-dtype"));
      s.draft_model_name = draft.name;
    }
    if (!l.acceptance && !l.accepted_tokens && !s.acceptance_published) {
      throw InputError("--draft", "needs --acceptance (probability each drafted token is kept) or --accepted-tokens (measured mean kept "
                                  "per step); only DeepSeek-V3's and R1's own MTP module has a published default");
    }
  }
  if (l.sparse_top_k && l.sparse_sqrt) {
    throw InputError("--sparse-top-k", "give one sparse-attention rule, not both --sparse-top-k and --sparse-sqrt");
  }
  if (l.sparse_top_k) {
    s.sparse = SparseAttention::top_k;
    s.sparse_top_k = *l.sparse_top_k;
  }
  if (l.sparse_sqrt) {
    s.sparse = SparseAttention::sqrt_context;
    s.sparse_sqrt_factor = *l.sparse_sqrt;
  }
  validate(s);
  return s;
}

std::string describe_levers(const ServingLevers& l) {
  std::string s;
  if (l.draft_tokens > 0) {
    const std::string kept = l.accepted_tokens > 0
                                 ? fmt::format("{:.3g} tokens kept per step (measured)", l.accepted_tokens)
                                 : fmt::format("acceptance {}{} -> {:.3g} tokens kept per step (Leviathan et al. 2023 eq. 1)", l.acceptance,
                                               l.acceptance_published ? " (DeepSeek-V3 report 5.4.3: 85-90%, the default)" : "",
                                               tokens_kept_per_step(l));
    const std::string who = !l.eagle_head.empty()
                                 ? "drafted by an " + std::string(l.eagle_head == "eagle3" ? "EAGLE-3" : "EAGLE") +
                                       " head (one layer like the model's last, with its LM head), one pass per draft, in every step"
                             : l.drafter == Drafter::mtp   ? "drafted by the MTP module, one pass per draft, in every step"
                             : l.drafter == Drafter::model ? "drafted by " + l.draft_model_name + ", one pass per draft, in every step"
                                                           : "drafts free (--drafter none: an upper bound)";
    s += fmt::format("speculative decoding / MTP: {} drafted per step, {}; {}", l.draft_tokens, kept, who);
  } else {
    s += "plain decode (no drafting)";
  }
  switch (l.sparse) {
    case SparseAttention::dense: s += "; dense attention"; break;
    case SparseAttention::top_k: s += fmt::format("; sparse attention: top-{} KV tokens per query", l.sparse_top_k); break;
    case SparseAttention::sqrt_context: s += fmt::format("; sparse attention: ceil({} sqrt(S)) KV tokens per query", l.sparse_sqrt_factor); break;
  }
  return s;
}

nlohmann::json levers_json(const ServingLevers& l) {
  const char* rule = l.sparse == SparseAttention::dense ? "dense" : l.sparse == SparseAttention::top_k ? "top_k" : "sqrt_context";
  return {{"draft_tokens", l.draft_tokens},
          {"acceptance", l.acceptance},
          {"tokens_kept_per_step", tokens_kept_per_step(l)},
          {"drafter", l.draft_tokens == 0 ? nlohmann::json() : nlohmann::json(!l.eagle_head.empty() ? l.eagle_head : l.drafter == Drafter::mtp ? "mtp" : l.drafter == Drafter::model ? l.draft_model_name : "none")},
          {"sparse_attention", rule},
          {"sparse_top_k_tokens", l.sparse == SparseAttention::top_k ? nlohmann::json(l.sparse_top_k) : nlohmann::json()},
          {"sparse_sqrt_factor", l.sparse == SparseAttention::sqrt_context ? nlohmann::json(l.sparse_sqrt_factor) : nlohmann::json()}};
}

int64_t single_int(const std::string& text, const std::string& field, int64_t lo, int64_t hi) {
  const auto v = parse_int_list(text, field, lo, hi);
  if (v.size() != 1) throw InputError(field, "expected one integer here, got '" + text + "'");
  return v.front();
}

std::vector<int64_t> batch_list(const ServingArgs& a) {
  auto v = parse_int_list(a.batch, "--batch", 1, 1 << 24);
  if (a.every_integer) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    v = every_integer(*lo, *hi);
  }
  return v;
}

std::vector<int64_t> replica_list(const ServingArgs& a) {
  if (a.replica_chips.empty()) return {};
  return parse_int_list(a.replica_chips, "--replica-chips", 1, max_chips);
}

/// The frontier, modes and plot vary chips per replica themselves.
void forbid_chips(const ServingArgs& a) {
  if (a.deployment.chips != 0) {
    throw InputError("--chips", "this command varies chips per replica itself; use --replica-chips");
  }
}

/// DeploymentOptions as resolve() builds them, without fixing the chip count.
DeploymentOptions base_options(const DeploymentArgs& a) { return options_from(a); }

Cell cost_cell(const std::optional<UsdPerToken>& c) { return c ? Cell(to_usd_per_mtok(*c)) : Cell{}; }

nlohmann::json opt_json(const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

void print(std::string_view command, const ServingArgs& a, const Table& t, const nlohmann::json& head, const std::string& text_head, const std::string& explain_text) {
  if (a.output.csv) {
    print_csv(std::cout, t);
  } else if (a.output.json) {
    nlohmann::json j = head;
    j["rows"] = to_json(t);
    print_json(std::cout, envelope(command, std::move(j), column_keys(t)));
  } else {
    std::cout << text_head << '\n';
    print_table(std::cout, t);
    std::cout << explain_text;
  }
}

namespace {

// ---------------------------------------------------------------------------------------
// Registration.

enum class Kind { sweep, balance, window, frontier, modes, plot };

CLI::App* add(CLI::App& parent, const char* name, const char* help, Kind kind, ServingArgs& a, Action& run) {
  auto* cmd = parent.add_subcommand(name, help);
  add_deployment_options(*cmd, a.deployment);
  // The frontier and modes vary chips per replica themselves (--replica-chips): their help
  // offers no --chips that would then be refused. plot takes -n for its curves (run_plot).
  if (kind == Kind::frontier || kind == Kind::modes) cmd->remove_option(cmd->get_option("--chips"));
  else add_infeasible_option(*cmd, a.deployment);
  add_lever_options(*cmd, a.levers);
  switch (kind) {
    case Kind::sweep:
      cmd->add_option("-b,--batch", a.batch, "Sequences per step: comma list, or a:b for powers of two from a to b")
          ->capture_default_str();
      cmd->add_flag("--every-integer", a.every_integer, "Every batch from the smallest to the largest of --batch");
      cmd->add_option("-s,--context", a.context, "Tokens in each sequence's KV cache: comma list or a:b")->capture_default_str();
      add_auto_pp_option(*cmd, a.pp);
      break;
    case Kind::balance:
      cmd->add_option("-s,--context", a.context, "Tokens in each sequence's KV cache")->capture_default_str();
      cmd->add_option("-b,--batch", a.crossover_batch, "Batch at which to find where KV fetch overtakes weight fetch")
          ->capture_default_str();
      break;
    case Kind::window:
      cmd->add_option("-s,--context", a.context, "Tokens in each sequence's KV cache: comma list or a:b")->capture_default_str();
      break;
    case Kind::frontier:
    case Kind::plot:
      cmd->add_option("-b,--batch", a.batch, "Candidate batches: comma list, or a:b for powers of two")->capture_default_str();
      cmd->add_flag("--every-integer", a.every_integer, "Every batch from the smallest to the largest of --batch");
      [[fallthrough]];
    case Kind::modes:
      cmd->add_option("-s,--context", a.context, "Tokens in each sequence's KV cache")->capture_default_str();
      cmd->add_option("--replica-chips", a.replica_chips, "Chips per replica to try: comma list or a:b (default 1..scale-up domain)");
      break;
  }
  if (kind == Kind::frontier) cmd->add_flag("--all-points", a.all_points, "List every point, not only the frontier");
  if (kind == Kind::sweep || kind == Kind::balance) {
    cmd->add_flag("--explain", a.explain, "Show how each figure is computed: formula, inputs with units and sources, the algebra (under the table; \"explanations\" with --json)");
  }
  if (kind == Kind::modes || kind == Kind::plot) {
    cmd->add_option("--speed-multiple", a.speed_multiples, "Speed multiples to price: comma list")->capture_default_str();
    cmd->add_option("--price-multiple", a.price_multiples, "Price multiples to spend: comma list")->capture_default_str();
    cmd->add_option("--baseline-tok-per-s-per-user", a.baseline_speed,
                    "Baseline: the cheapest point at least this fast (default: the fastest point near the cost floor)");
    cmd->add_option("--baseline-cost-tolerance", a.baseline_tolerance,
                    "Default baseline: the fastest point within this fraction of the cost floor [0-1)")
        ->capture_default_str();
  }
  if (kind == Kind::plot) {
    file_name_option(cmd->add_option("-o,--output", a.html_path, "HTML file to write"))->capture_default_str();
    cmd->add_flag("--json", a.output.json, "Print the chart data (JSON) instead of writing HTML");
  } else {
    add_output_options(*cmd, a.output);
  }
  cmd->callback([&run, &a, kind, cmd] {
    const CLI::Option* batch = cmd->get_option_no_throw("--batch");
    a.batch_stated = batch != nullptr && batch->count() > 0;
    run = [&a, kind] {
      switch (kind) {
        case Kind::sweep: run_sweep(a); break;
        case Kind::balance: run_balance(a); break;
        case Kind::window: run_window(a); break;
        case Kind::frontier: run_frontier(a); break;
        case Kind::modes: run_modes(a); break;
        case Kind::plot: run_plot(a); break;
      }
    };
  });
  return cmd;
}

}  // namespace
}  // namespace serving_cli

void register_serving(CLI::App& app, Action& run) {
  using namespace serving_cli;
  static thread_local ServingArgs sweep, balance, window, frontier, modes, plot;
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  sweep = balance = window = frontier = modes = plot = ServingArgs{};
  auto* serving = app.add_subcommand("serving", "Serving economics: latency and cost against batch, context and chips; "
                                                "balance points; the batching window; the latency-cost frontier; fast and slow modes");
  serving->require_subcommand(1);
  add(*serving, "sweep", "Decode step time (TPOT), output tokens/s per user and per chip, cost per output Mtok against batch and context, each term apart",
      Kind::sweep, sweep, run);
  add(*serving, "balance", "Batch at which decode turns compute-bound (with and without KV); context where KV overtakes weights",
      Kind::balance, balance, run);
  add(*serving, "window", "The batching window: HBM capacity / bandwidth, the batch that fills memory and its step time",
      Kind::window, window, run);
  add(*serving, "frontier", "Pareto frontier of output tokens/s per user against cost per output Mtok over batch and chips per replica (the sizes an engine can run)",
      Kind::frontier, frontier, run);
  add(*serving, "modes", "Fast mode (the price of a speed multiple) and slow mode (the cost floor) read off the frontier",
      Kind::modes, modes, run);
  add(*serving, "plot", "Self-contained HTML charts (latency and cost vs batch with each term, frontier) or their JSON data",
      Kind::plot, plot, run);
}

}  // namespace chalk::cli
