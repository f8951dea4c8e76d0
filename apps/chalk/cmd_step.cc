// `chalk step`: the engine step of batch compositions another simulator formed (BLIS,
// SGLang's simulator, llm-d's; docs/simulator.md, "chalk as a step-time predictor"): each
// batch priced by batch_step_work (engine/step_batch.h), the request simulator's own step,
// on the deployment as `chalk simulate --engine E` runs it (sim::engine_deployment).
#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/step_batch.h"
#include "chalk/sim/simulator.h"
#include "commands.h"
#include "deployment_options.h"
#include "envelope.h"
#include "sim_cli.h"
#include "step_batches.h"
#include "table.h"

namespace chalk::cli {
namespace {

struct StepArgs {
  DeploymentArgs deployment;
  PolicyArgs policy;
  OutputArgs output;
  std::string prefill, decode;  ///< one batch (step_batches.h, parse_step_flags)
  std::string batches;          ///< many: JSON text, a file or - (read_step_batches)
};

/// Most batches and sequences one call prices (the web API bounds a request's work below it).
constexpr int64_t kMaxStepSequences = 1 << 24;

void run_step(StepArgs a) {
  std::vector<StepBatch> batches;
  if (!a.batches.empty()) {
    if (!a.prefill.empty() || !a.decode.empty()) throw InputError("--batches", "give either --batches or --prefill/--decode, not both");
    batches = parse_step_batches(read_step_batches(a.batches));
  } else {
    if (a.prefill.empty() && a.decode.empty()) throw InputError("--decode", "no batch: expected --prefill TOKENS[:CACHED],..., --decode CONTEXT[xCOUNT],... or --batches JSON");
    batches.push_back(parse_step_flags(a.prefill, a.decode));
  }
  int64_t sequences = 0, longest = 0;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const std::string at = a.batches.empty() ? "--" : fmt::format("batches[{}].", i);
    check_step_batch(batches[i], 0, at);  // signs first: the window once the model is known
    for (const auto& c : batches[i].prefill) longest = std::max(longest, c.prefix + c.tokens);
    for (const int64_t c : batches[i].decode) longest = std::max(longest, c + 1);
    sequences += static_cast<int64_t>(batches[i].prefill.size() + batches[i].decode.size());
    if (sequences > kMaxStepSequences) throw InputError(a.batches.empty() ? "--decode" : "--batches", fmt::format("more than {} sequences in all; expected fewer per call", kMaxStepSequences));
  }
  load_engine_profile(a.policy, a.deployment);
  // Only a stated --gpu-memory-utilization replaces the reserve: 1 - (1 - 0.1) printed
  // 0.09999999999999998 (review L3).
  if (a.policy.gpu_memory_utilization) a.deployment.memory_reserve = 1.0 - memory_utilization_from(a.policy, a.deployment.memory_reserve);
  const sim::EnginePolicy policy = policy_from(a.policy);
  sim::validate(policy);
  std::optional<ReplicaNote> note;
  // The deployment `chalk simulate` with the same flags prices its steps on.
  const Deployment d = sim::engine_deployment(resolve(a.deployment, std::max<int64_t>(longest, 1), &note), policy);
  for (std::size_t i = 0; i < batches.size(); ++i) check_step_batch(batches[i], d.model.max_context, a.batches.empty() ? "--" : fmt::format("batches[{}].", i));

  Table t;
  t.columns = {{"batch_index", "#"},            {"prefill_chunks", "chunks"},          {"prefill_tokens", "prefill tok"},
               {"prefix_tokens", "cached tok"}, {"decode_batch", "decodes"},           {"decode_context_sum_tokens", "decode ctx sum"},
               {"t_step_ms", "step ms"},        {"t_compute_ms", "compute ms"},        {"t_memory_ms", "memory ms"}};
  t.set_priority({"prefix_tokens", "decode_context_sum_tokens", "t_compute_ms", "t_memory_ms"}, 2);
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const StepBatch& b = batches[i];
    int64_t new_tokens = 0, cached = 0, context = 0;
    for (const auto& c : b.prefill) {
      new_tokens += c.tokens;
      cached += c.prefix;
    }
    for (const int64_t c : b.decode) context += c;
    const MixedStepWork w = batch_step_work(d, b);
    t.add({static_cast<int64_t>(i), static_cast<int64_t>(b.prefill.size()), new_tokens, cached, static_cast<int64_t>(b.decode.size()), context,
           to_ms(w.t_step), to_ms(w.t_compute), to_ms(w.t_memory)});
  }
  std::vector<std::string> warnings = deployment_warnings(d);
  if (a.output.csv) {
    print_csv(std::cout, t, warnings);
  } else if (a.output.json) {
    auto j = describe_json(d);
    j["replica_choice"] = replica_note_json(note);
    j["engine"] = {{"name", sim::release_name(policy)}, {"max_batched_tokens", policy.max_batched_tokens}, {"max_sequences", policy.max_sequences}, {"source", policy.source}};
    j["engine_profile"] = engine_profile_json(a.policy.profile);
    j["rows"] = to_json(t);
    j["warnings"] = warnings;
    print_json(std::cout, envelope("step", std::move(j), column_keys(t)));
  } else {
    std::cout << "chalk step: one engine step per batch, the request simulator's own step (`chalk simulate --engine " << sim::release_name(policy)
              << "` prices each of its steps so; docs/simulator.md, \"chalk as a step-time predictor\")\n"
              << describe_text(d) << replica_note_text(note) << engine_profile_text(a.policy);
    for (const auto& w : warnings) std::cout << "warning     " << w << '\n';
    std::cout << '\n';
    print_table(std::cout, t);
  }
}

}  // namespace

void register_step(CLI::App& app, Action& run) {
  static thread_local StepArgs a;
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  a = StepArgs{};
  a.deployment.replica_rule = ReplicaRule::smallest;  // as `simulate`: the smallest replica unless -n says otherwise
  auto* cmd = app.add_subcommand("step", "The time of one engine step for each batch composition (prefill chunks after their cached tokens, decodes at their contexts): the request simulator's own step, as a step-time model for other simulators (BLIS, SGLang's, llm-d's)");
  add_deployment_options(*cmd, a.deployment);
  add_infeasible_option(*cmd, a.deployment);
  add_policy_options(*cmd, a.policy);
  cmd->add_option("--prefill", a.prefill, "One batch's prefill chunks: TOKENS[:CACHED] comma list, new prompt tokens after tokens already in the KV cache (512:0,256:1024)");
  cmd->add_option("--decode", a.decode, "One batch's decodes: CONTEXT[xCOUNT] comma list, tokens in each sequence's KV cache (1024x32,2048)");
  cmd->add_option("--batches", a.batches, "Many batches as JSON: the text itself, a file, or - for standard input; chalk's {prefill, decode}, BLIS's StepConfig or SGLang's {reqs} per batch (docs/simulator.md)");
  add_output_options(*cmd, a.output);
  cmd->callback([&run] { run = [] { run_step(a); }; });
}

}  // namespace chalk::cli
