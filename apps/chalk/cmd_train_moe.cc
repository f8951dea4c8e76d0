// `chalk train moe`: the MoE trade (lecture 29:46): compute per token against parameters for
// a sparse model at equal quality, from Clark et al. 2022 and Krajewski et al. 2024
// (training/moe_scaling.h; docs/training-runs.md, "The MoE trade").
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/training/moe_scaling.h"
#include "envelope.h"
#include "commands.h"
#include "train_cli.h"
#include "deployment_options.h"
#include "table.h"
#include "train_run_cli.h"

namespace chalk::cli {
namespace {

using namespace train_run;

struct MoeArgs {
  double active_params = 1e9;
  std::string experts = "1,8,64,128,512";
  double tokens = 1e11;
  double granularity = 8;
  double expert_share = 2.0 / 3.0;
  std::string routing = "s-base";
  double flops = 1e20;
  OutputArgs output;
};

void run_moe(const MoeArgs& a) {
  const std::map<std::string, std::string> flags = {{"params", "--active-params"}, {"experts", "--experts"},       {"tokens", "--tokens"},
                                                    {"granularity", "--granularity"}, {"expert_share", "--expert-share"}, {"flops", "--flops"}};
  const RoutedFit fit = parse_routed_fit(a.routing, "--routing");
  const auto experts = parse_int_list(a.experts, "--experts", 1, 1 << 20);
  Table t;
  t.columns = {{"law", "law"},
               {"routed_experts", "experts"},
               {"params_active", "active N", 4},
               {"params_total", "total N", 4},
               {"dense_equivalent_params", "dense equal", 4},
               {"compute_ratio", "dense/MoE FLOPs per token", 3},
               {"param_ratio", "MoE/dense params", 3},
               {"loss", "loss", 4}};
  for (int64_t e : experts) {
    const MoeTrade r = with_flags(flags, [&] { return clark_trade(fit, a.active_params, static_cast<double>(e), a.expert_share); });
    t.add({"clark-" + fit.name, static_cast<double>(e), r.active_params, r.total_params, r.dense_equivalent, r.compute_ratio, r.param_ratio,
           r.loss});
  }
  const MoeTrade k = with_flags(flags, [&] { return krajewski_trade(a.active_params, a.tokens, a.granularity, a.expert_share); });
  t.add({std::string("krajewski"), k.experts, k.active_params, k.total_params, k.dense_equivalent, k.compute_ratio, k.param_ratio, k.loss});
  const double multiplier = with_flags(flags, [&] { return dense_compute_multiplier(a.flops, a.granularity, a.expert_share); });
  const double cutoff = routing_cutoff(fit);
  nlohmann::json sources = {
      {"clark", {{"source", fit.source},
                 {"routing", fit.name},
                 {"coefficients", {{"a", fit.a}, {"b", fit.b}, {"c", fit.c}, {"d", fit.d}, {"e_start", fit.e_start}, {"e_max", fit.e_max}}},
                 {"law", "log10 L = a log10 N + b log10 E^ + c log10 N log10 E^ + d; dense equivalent: L(N_bar, 1) = L(N, E)"},
                 {"routing_cutoff_params", fit.paper_cutoff_params},
                 {"routing_cutoff_params_rounded_fit", cutoff}}},
      {"krajewski",
       {{"source", krajewski_moe_fit().source},
        {"coefficients_moe", {{"a", 18.1}, {"alpha", 0.115}, {"b", 30.8}, {"beta", 0.147}, {"g", 2.1}, {"gamma", 0.58}, {"c", 0.47}}},
        {"coefficients_dense", {{"a", 16.3}, {"alpha", 0.126}, {"b", 26.7}, {"beta", 0.127}, {"c", 0.47}}},
        {"law", "L = c + (g / G^gamma + a) / N^alpha + b / D^beta, N all non-embedding parameters, expansion E = 64; "
                "routed_experts = E x G, experts of 1/G the width, G routed per token"},
        {"tokens", a.tokens},
        {"granularity", a.granularity},
        {"flops", a.flops},
        {"dense_compute_multiplier", multiplier}}}};
  if (a.output.csv) {
    print_csv(std::cout, t);
  } else if (a.output.json) {
    nlohmann::json j;
    j["rows"] = to_json(t);  // the trades
    j["laws"] = sources;
    j["expert_share"] = a.expert_share;
    print_json(std::cout, envelope("train moe", std::move(j), column_keys(t)));
  } else {
    std::cout << "chalk train moe: compute per token against parameters at equal quality (lecture 29:46; docs/training-runs.md)\n"
              << fmt::format("clark       {} (routing {}): a {} b {} c {} d {} E_start {} E_max {}; routing stops helping above {} dense "
                             "parameters (the paper's figure; 10^(-b/c) of these rounded values: {})\n",
                             fit.source, fit.name, fit.a, fit.b, fit.c, fit.d, fit.e_start, fit.e_max,
                             human_count(fit.paper_cutoff_params), human_count(cutoff))
              << fmt::format("krajewski   {}: MoE a 18.1 alpha 0.115 b 30.8 beta 0.147 g 2.1 gamma 0.58 c 0.47; dense a 16.3 alpha 0.126 "
                             "b 26.7 beta 0.127 c 0.47; E = 64, G = {}, {} tokens\n"
                             "            its experts {} = E x G: the expansion's 64 expert FFNs cut into G = {} pieces each of 1/G the "
                             "width, G of them routed per token (Krajewski section 3), so its active N is Clark's at one expert\n",
                             krajewski_moe_fit().source, format_number(a.granularity, 3), human_count(a.tokens),
                             fmt::format("{:g}", k.experts), fmt::format("{:g}", a.granularity))
              << fmt::format("equal loss  a compute-optimal MoE (G = {}, experts {:.3g} of a block) at {:.3g} FLOPs matches a "
                             "compute-optimal dense model trained with {:.1f}x the compute (router FLOPs left out)\n",
                             format_number(a.granularity, 3), a.expert_share, a.flops, multiplier)
              << fmt::format("total N     active x (1 + (experts - 1) x {:.3g}): the routed share of the parameters\n\n", a.expert_share);
    print_table(std::cout, t);
  }
}

}  // namespace

void register_train_moe(CLI::App& train, Action& run) {
  static thread_local MoeArgs a;
  a = MoeArgs{};  // fresh defaults at each registration: `chalk web` and the Python module register once per request
  auto* cmd = train.add_subcommand("moe", "The MoE trade (lecture 29:46): compute per token against parameters at equal quality, from "
                                          "published MoE scaling laws (Clark et al. 2022, Krajewski et al. 2024)");
  cmd->add_option("--active-params", a.active_params, "Parameters one token uses (Clark's dense base model N)")->capture_default_str();
  cmd->add_option("--experts", a.experts, "Experts per routed layer (Clark): comma list or a:b")->capture_default_str();
  cmd->add_option("--routing", a.routing, "Clark's routing technique: s-base, rl-r or hash")->capture_default_str();
  cmd->add_option("--tokens", a.tokens, "Training tokens (Krajewski)")->capture_default_str();
  cmd->add_option("--granularity", a.granularity, "Granularity G >= 1 (Krajewski; expansion E = 64)")->capture_default_str();
  cmd->add_option("--expert-share", a.expert_share, "Fraction of a layer's parameters in its routed FFN (2/3 for d_ff = 4 d_model)")
      ->capture_default_str();
  cmd->add_option("--flops", a.flops, "Budget for the compute-optimal comparison (Krajewski section 6: 1e20 -> about 20x)")
      ->capture_default_str();
  add_output_options(*cmd, a.output);
  cmd->callback([&run] { run = [] { run_moe(a); }; });
}

}  // namespace chalk::cli
