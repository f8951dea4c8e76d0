// `chalk prices`: API price sheets, what they reveal about the systems behind them
// (lecture 1:32:51-2:03:48), and the prices a deployment implies. See docs/prices.md.
// This file: the shared helpers and the registration; the subcommands live in
// cmd_prices_<concept>.cc (see prices_cli.h).
#include "arg_parse.h"
#include "chalk/prices/hosts.h"
#include "chalk/prices/prices.h"
#include "commands.h"
#include "deployment_options.h"
#include "pipeline_cli.h"
#include "prices_cli.h"
#include "table.h"

namespace chalk::cli {
namespace prices_cli {

double mtok(UsdPerToken p) { return to_usd_per_mtok(p); }

std::string host_models_list() {
  std::string out;
  for (const auto& n : builtin_host_sheet_models()) out += (out.empty() ? "" : ", ") + n;
  return out;
}
Cell opt_mtok(const std::optional<UsdPerToken>& p) { return p ? Cell(mtok(*p)) : Cell{}; }

}  // namespace prices_cli

void register_prices(CLI::App& app, Action& run) {
  using namespace prices_cli;
  static thread_local ListArgs list;
  static thread_local ShowArgs show;
  static thread_local InferArgs infer;
  static thread_local ForwardArgs forward;
  static thread_local CompareArgs compare;
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  list = ListArgs{};
  show = ShowArgs{};
  infer = InferArgs{};
  forward = ForwardArgs{};
  compare = CompareArgs{};
  auto* prices = app.add_subcommand("prices", "API price sheets, what they reveal about the systems behind them, and forward prices");
  prices->require_subcommand(1);

  auto* l = prices->add_subcommand("list", "List the built-in price sheets (data/prices/, each citing its source)");
  add_output_options(*l, list.output);
  l->callback([&run] { run = [] { run_list(list); }; });

  auto* s = prices->add_subcommand("show", "Show one price sheet: a built-in NAME or a path to a chalk-prices file");
  s->add_option("sheet", show.sheet, "Built-in sheet name (see `chalk prices list`) or path")->required();
  add_output_options(*s, show.output);
  s->callback([&run] { run = [] { run_show(show); }; });

  auto* i = prices->add_subcommand("infer",
                                   "Read a sheet backwards: KV bytes per token (a), phase bounds (b), cache hits (c), memory tiers (d),\n"
                                   "fast/priority/flex multiples as batches (e), the context ceiling (f). Assumptions take VALUE or LOW:VALUE:HIGH");
  i->add_option("sheet", infer.sheet, "Built-in sheet name or path; omit to give the prices as flags");
  auto& pf = infer.prices;
  i->add_option("--input-usd-per-mtok", pf.input, "Input price, USD per 1M tokens");
  i->add_option("--output-usd-per-mtok", pf.output, "Output price, USD per 1M tokens");
  i->add_option("--cache-read-usd-per-mtok", pf.cache_read, "Cache read (hit) price");
  i->add_option("--cache-storage-usd-per-mtok-per-hour", pf.storage, "Cache storage price per 1M tokens per hour");
  i->add_option("--cache-write-5min-usd-per-mtok", pf.write_5min, "Price of a cache write held 5 minutes");
  i->add_option("--cache-write-1h-usd-per-mtok", pf.write_1h, "Price of a cache write held 1 hour");
  i->add_option("--long-context-threshold-tokens", pf.threshold, "Prompt length above which the long-context tier applies");
  i->add_option("--long-context-input-multiplier", pf.lc_input_multiplier, "Long-context input multiplier (default 2)");
  i->add_option("--long-context-output-multiplier", pf.lc_output_multiplier, "Long-context output multiplier (default 1.5)");
  i->add_option("--batch-multiplier", pf.batch, "Batch API price multiplier, (0, 1]");
  i->add_option("--fast-multiplier", pf.fast, "Fast-mode price multiplier");
  i->add_option("--fast-speedup", pf.fast_speedup, "Fast-mode stated speedup");
  i->add_option("--priority-multiplier", pf.priority, "Priority-tier price multiplier");
  i->add_option("--flex-multiplier", pf.flex, "Flex-tier price multiplier");
  i->add_option("--off-peak-multiplier", pf.off_peak, "Off-peak price multiplier");
  auto& af = infer.assumptions;
  i->add_option("--active-params", af.active_params, "N_active (default 25e9:50e9:100e9; lecture 1:35:47)");
  i->add_option("--flops-per-byte", af.flops_per_byte, "Chip F/W, FLOP/s per byte/s of HBM (default 200:300:600)");
  i->add_option("--attention-flops-per-kv-byte", af.attention,
                "Attention FLOPs per KV byte attended; 0 drops them as the lecture does (default 0:0:16; GQA bf16: query heads per KV head)");
  i->add_option("--weights-gb", af.weights_gb, "Weight GB one decode step reads (default 100:500:2000)");
  i->add_option("--decode-context", af.decode_context, "Mean context of a decode step, tokens (default 1024:4096:16384)");
  i->add_option("--kv-bytes-per-token", af.kv_bytes_per_token, "KV bytes per token when the sheet has no price step (default 1000:1667:4000)");
  i->add_option("--hbm-share-of-chip-price", af.hbm_share, "Share of the chip price charged to HBM capacity (default 0.25:1:1)");
  i->add_option("--dram-usd-per-gb-hour", af.dram, "DRAM cost per GB-hour (default $2.5-$10/GB over 4 years)");
  i->add_option("--flash-usd-per-gb-hour", af.flash, "Flash cost per GB-hour (default $0.05-$0.20/GB over 4 years)");
  i->add_option("--disk-usd-per-gb-hour", af.disk, "Disk cost per GB-hour (default $0.015-$0.03/GB over 4 years)");
  i->add_option("--step-budget-ms", af.step_budget_ms, "Decode step-time budget for the context ceiling (default 20)");
  i->add_option("--storage-duration-s", af.storage_duration_s, "Hold time for a per-hour storage price (default 3600)");
  i->add_option("--base-batch", af.base_batch, "Base decode batch for (e) (default 0 = cost-optimal)");
  add_deployment_options(*i, infer.deployment);
  add_infeasible_option(*i, infer.deployment);
  add_output_options(*i, infer.output);
  i->add_flag("--explain", infer.explain,
              "Show how the central figures are computed: formula, inputs with units and sources, the algebra (under the table; "
              "\"explanations\" with --json)");
  i->callback([&run] { run = [] { run_infer(infer); }; });

  auto* f = prices->add_subcommand("forward", "The input and output prices a model on a system implies, beside a provider's sheet");
  add_deployment_options(*f, forward.deployment);
  add_infeasible_option(*f, forward.deployment);
  f->add_option("-b,--batch", forward.batch, "Decode batch (default 0: the largest at --min-tok-per-s-per-user); with no -n, the replica is the cheapest size "
                "whose HBM holds it (the page's cost headline)")->capture_default_str();
  f->add_option("-s,--context", forward.context, "Decode context, tokens")->capture_default_str();
  f->add_option("--prompt", forward.prompt, "Prompt tokens of the prefill that prices input")->capture_default_str();
  f->add_option("--prefill-batch", forward.prefill_batch,
                "Prompts in the prefill that prices input (default 0 = one per data-parallel attention group, filling the layout)")
      ->capture_default_str();
  f->add_option("--min-tok-per-s-per-user", forward.min_speed,
                "With no -b: price the largest batch, and with no -n the cheapest replica, that streams at least this many "
                "output tok/s to each user (default: MLPerf Inference's interactive limit, a TPOT of 40 ms; 50 prices the speed "
                "`prices compare` assumes for hosts that state none; 0: the batch that fills HBM, the cost floor for offline work)")
      ->capture_default_str();
  f->add_option("--utilization", forward.utilization,
                "Billable fraction of chip time (0, 1] (default 1 with --margin 0: the headline is the cost, as hosts price near cost; "
                "a second line gives the price at utilization 0.5 and margin 0.5)")
      ->capture_default_str();
  f->add_option("--margin", forward.margin, "Gross margin [0, 1): price = cost / (utilization (1 - margin))")->capture_default_str();
  file_name_option(f->add_option("--compare", forward.compare, "A price sheet to set beside (name or path)"));
  add_auto_pp_option(*f, forward.pp);
  add_energy_options(*f, forward.energy);
  add_output_options(*f, forward.output);
  f->callback([&run, f] {
    forward.min_speed_given = f->count("--min-tok-per-s-per-user") > 0;
    run = [] { run_forward(forward); };
  });

  auto* c = prices->add_subcommand("compare",
                                   "Hosts' prices for an open model (data/prices/hosts/) beside chalk's cost on each system at the\n"
                                   "host's speed: the cheapest replica and batch that reach it, its cost, and the host's margin and\n"
                                   "break-even utilization at that cost");
  c->add_option("-m,--model", compare.model, "A built-in model with a host sheet (" + host_models_list() + ")")->required();
  c->add_option("-H,--hardware", compare.hardware, "Systems to price on, comma-separated (default: every built-in system)");
  c->add_option("--weights", compare.weights, "Weights' format (default: the host's stated quantization, else the checkpoint's)");
  c->add_option("--kv-dtype", compare.kv, "KV-cache format")->capture_default_str();
  c->add_option("--input", compare.input, "Prompt tokens per request (the blend's input share; 3:1 as Artificial Analysis blends)")
      ->capture_default_str();
  c->add_option("--output", compare.output, "Output tokens per request")->capture_default_str();
  c->add_option("--prefix-hit-rate", compare.prefix_hit_rate, "Fraction of input tokens that are cache hits [0-1]")->capture_default_str();
  c->add_option("--speed", compare.speed,
                "Output tok/s per user assumed for a host whose sheet states no speed (a typical interactive GPU speed; "
                "such rows say 'assumed')")
      ->capture_default_str();
  add_output_options(*c, compare.output_format);
  c->callback([&run, c] {
    compare.hardware_given = c->count("--hardware") > 0;
    run = [] { run_compare(compare); };
  });
}

}  // namespace chalk::cli
