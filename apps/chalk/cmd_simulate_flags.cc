// `chalk simulate`'s flags (split from cmd_simulate.cc, which runs the command: run_simulate).

#include "arg_parse.h"
#include "commands.h"
#include "deployment_options.h"
#include "energy_cli.h"
#include "pipeline_cli.h"
#include "serving_cli.h"
#include "sim_cli.h"
#include "simulate_args.h"

namespace chalk::cli {

void register_simulate(CLI::App& app, Action& run) {
  static thread_local SimulateArgs a;
  a = SimulateArgs{};  // fresh defaults at each registration: `chalk web` and the Python module register once per request
  // Traffic questions (TTFT/TPOT percentiles) on the smallest replica unless -n says otherwise,
  // as `decode` (issue 30); with a rate, the cheapest (run_simulate); `plan` searches replica
  // sizes against SLOs.
  a.deployment.replica_rule = ReplicaRule::smallest;
  auto* cmd = app.add_subcommand("simulate", "Requests through a serving engine: TTFT, TPOT, ITL, E2E percentiles, throughput, goodput");
  add_deployment_options(*cmd, a.deployment);
  // What simulate's default is (review 9 L1: the shared text said the smallest, and with a
  // rate simulate takes the cheapest: run_simulate).
  cmd->get_option("--chips")->description(
      "Chips holding one replica, 1..1048576 (default, printed as `replica`: with a --rate or a --trace, the replica size within the "
      "scale-up domain and count cheapest in $/hour that serve the --rate or the --trace's mean rate, with --disaggregate each "
      "pool's on its own part of the requests; without one, the smallest that holds the weights and one sequence). Sized for "
      "the rate, not for an SLO: a missed SLO is a warning, and `chalk plan` sizes for the SLO");
  add_infeasible_option(*cmd, a.deployment);
  add_traffic_options(*cmd, a.traffic, 2000);
  add_policy_options(*cmd, a.policy);
  add_slo_options(*cmd, a.slo);
  add_energy_options(*cmd, a.energy);
  serving_cli::add_draft_options(*cmd, a.levers);
  add_auto_pp_option(*cmd, a.pp);
  auto* replicas = cmd->add_option("--replicas", a.replicas,
                                   "Replicas of --chips chips each; requests go as --routing says (default 1; with a rate and no --chips, "
                                   "as many as serve the rate at 80% of their saturated capacity, of the size cheapest for it; a --trace's mean rate counts as a rate)");
  cmd->add_option("--routing", a.routing,
                  "How requests reach replicas (and a disaggregated prefill pool): round-robin, or cache-aware (SGLang router's cache_aware "
                  "policy: the replica with the longest cached prefix over 30% of the prompt, unless the load is unbalanced by over 64 "
                  "requests and 1.5x)")
      ->capture_default_str();
  cmd->add_flag("--disaggregate", a.disaggregate, "Separate prefill and decode pools, the prompt's KV sent between them");
  cmd->add_option("--prefill-chips", a.prefill_chips, "Chips per prefill replica (default: --chips)");
  auto* prefill_replicas = cmd->add_option("--prefill-replicas", a.prefill_replicas,
                                           "Prefill replicas (with a rate and no chips, the prefill pool's cheapest size x count "
                                           "that serves it)")
                              ->capture_default_str();
  cmd->add_option("--decode-chips", a.decode_chips, "Chips per decode replica (default: --chips)");
  auto* decode_replicas = cmd->add_option("--decode-replicas", a.decode_replicas,
                                          "Decode replicas (with a rate and no chips, the decode pool's cheapest size x count "
                                          "that serves it)")
                             ->capture_default_str();
  cmd->add_option("--prefill-hardware", a.prefill_hardware, "With --disaggregate: the prefill pool's system (default: --hardware; mixed chips)");
  cmd->add_option("--decode-hardware", a.decode_hardware, "With --disaggregate: the decode pool's system (default: --hardware; mixed chips)");
  cmd->add_flag("--compare", a.compare, "With --disaggregate: also aggregated serving on the same chips");
  file_name_option(cmd->add_option("--plot", a.plot, "Write an HTML page of latency distributions and occupancy over time"));
  add_output_options(*cmd, a.output);
  cmd->callback([&run, replicas, prefill_replicas, decode_replicas] {
    a.replicas_stated = replicas->count() > 0;
    a.pool_replicas_stated = prefill_replicas->count() > 0 || decode_replicas->count() > 0;
    run = [] { with_flag_names([] { run_simulate(a); }); };
  });
}

}  // namespace chalk::cli
