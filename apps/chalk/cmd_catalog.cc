// `chalk models` and `chalk hardware`: the built-in catalogs, or one entry / file.
#include <iostream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "commands.h"
#include "deployment_options.h"
#include "table.h"

namespace chalk::cli {
namespace {

struct CatalogArgs {
  std::vector<std::string> names;
  OutputArgs output;
  std::string kv = "bf16";
  int64_t context = 4096;
};

void run_models(const CatalogArgs& a) {
  const DType kv = parse_dtype(a.kv, "--kv-dtype");
  if (a.context < 1 || a.context > (1LL << 30)) throw InputError("--context", fmt::format("must be in 1..{}, got {}", 1LL << 30, a.context));
  Table t;
  t.columns = {{"name", "model"},
               {"architecture", "arch"},
               {"layers", "layers"},
               {"params_total_billion", "total B", 4},
               {"params_active_billion", "active B", 4},
               {"params_active_excluding_embedding_billion", "active excl. emb B", 4},
               {"kv_bytes_per_token", fmt::format("KV B/token @{}", a.context), 5},
               {"state_bytes_per_sequence", "state B/seq", 4},
               {"decode_gflop_per_token", fmt::format("GFLOP/token @{}", a.context), 4},
               {"weights_gb", "weights GB", 4},
               {"max_context_tokens", "max context"},
               {"source", "source"}};
  // At 100 columns the per-token columns the title promises stay; detail goes first (review M5).
  t.set_count({"kv_bytes_per_token", "state_bytes_per_sequence"});  // 2.621M bytes, not 2621440
  t.set_priority({"name"}, 0);
  t.set_priority({"layers", "params_active_excluding_embedding_billion", "state_bytes_per_sequence", "weights_gb", "max_context_tokens", "source"}, 2);
  const auto names = a.names.empty() ? builtin_model_names() : a.names;
  for (const auto& n : names) {
    const ModelSpec m = load_model(n);
    const ParamCounts p = count_params(m);
    // The HF model_type alone ("deepseek_v3"); a note after it ("(DeepSeek inference
    // config)") joins the source column, which --wide, --csv and --json show.
    const ArchitectureParts arch = split_architecture(m.architecture, m.source);
    t.add({m.name, arch.type, n_layers(m), p.total() / 1e9, p.active() / 1e9, p.active_excluding_embedding() / 1e9,
           kv_bytes_per_token(m, a.context, kv).value(), state_bytes_per_sequence(m).value(),
           decode_flops_per_token(m, a.context).value() / 1e9,
           to_gb(weight_bytes(m, m.weights)), m.max_context, arch.source});
  }
  print_table_or(std::cout, t, a.output.json, a.output.csv, fmt::format("chalk models: parameters (counts), KV cache ({}) and decode FLOPs per token at context {}", a.kv, a.context), "models");
}

void run_hardware(const CatalogArgs& a) {
  Table t;
  t.columns = {{"name", "system"},
               {"chip", "chip"},
               {"bf16_tflop_per_s", "bf16 TF", 4},
               {"fp8_tflop_per_s", "fp8 TF", 4},
               {"fp4_tflop_per_s", "fp4 TF", 4},
               {"hbm_gb_per_chip", "HBM GB", 4},         // the keys of the hardware object (docs/output-schema.md)
               {"hbm_tb_per_s_per_chip", "HBM TB/s", 4},
               {"memory_type", "memory"},  // GDDR6 on L4, L40S, A10G: the HBM columns are their memory
               {"bf16_flop_per_byte", "FLOP/B bf16", 3},
               {"hbm_sweep_ms", "HBM sweep ms", 3},
               {"scale_up_domain_chips", "scale-up"},
               {"scale_up_link", "up link"},  // PCIe-only boxes say so (review 5 L4): their 8 chips share the host's PCIe
               {"scale_up_gb_per_s_per_direction", "up GB/s/dir", 4},
               {"scale_out_gb_per_s_per_direction", "out GB/s/dir", 4},
               {"price_usd_per_chip_hour", "$/chip-h", 3},
               {"date", "date"},
               {"status", "status"},
               {"scale_up_topology", "topology"},
               {"tdp_w", "TDP W", 4}};
  // The title's FLOPs per byte, HBM sweep time and the price stay at 100 columns (review M5).
  t.set_priority({"name"}, 0);
  t.set_priority({"chip", "fp4_tflop_per_s", "memory_type", "scale_up_link", "scale_up_gb_per_s_per_direction", "scale_out_gb_per_s_per_direction", "date", "status",
                  "scale_up_topology", "tdp_w"}, 2);
  // The scale-up link in words: a PCIe box (no NVLink) with its bandwidth, since its chips
  // talk through the host's PCIe switch, not a scale-up fabric; others by the link's name.
  auto up_link = [](const SystemSpec& s) -> Cell {
    const bool pcie = s.scale_up_topology && *s.scale_up_topology == ScaleUpTopology::pcie;
    if (pcie) return Cell(fmt::format("PCIe only, {:.0f} GB/s/dir", to_gb_per_s(s.scale_up_bandwidth_per_direction)));
    return s.scale_up_name.empty() ? Cell{} : Cell(s.scale_up_name);
  };
  const auto names = a.names.empty() ? builtin_system_names() : a.names;
  std::vector<std::string> pcie_only;  // a note under the text table: its scale-up is no fabric
  for (const auto& n : names) {
    const SystemSpec s = load_system(n);
    if (s.scale_up_topology && *s.scale_up_topology == ScaleUpTopology::pcie) {
      pcie_only.push_back(fmt::format("{} ({:.0f} GB/s/dir)", s.name, to_gb_per_s(s.scale_up_bandwidth_per_direction)));
    }
    auto peak = [&](MatmulPrecision p) { return s.chip.supports(p) ? Cell(to_tflop_per_s(s.chip.peak_for(p))) : Cell{}; };
    const double out = to_gb_per_s(s.scale_out_bandwidth_per_direction);
    t.add({s.name, s.chip.name, peak(MatmulPrecision::bf16), peak(MatmulPrecision::fp8), peak(MatmulPrecision::fp4),
           to_gb(s.chip.hbm_capacity), to_tb_per_s(s.chip.hbm_bandwidth), s.chip.memory_type, flops_per_byte(s.chip, MatmulPrecision::bf16).value(),
           to_ms(hbm_sweep_time(s.chip.hbm_capacity, s.chip.hbm_bandwidth)), s.scale_up_domain, up_link(s),
           to_gb_per_s(s.scale_up_bandwidth_per_direction), out > 0 ? Cell(out) : Cell{},
           s.price_per_chip ? Cell(to_usd_per_hour(*s.price_per_chip)) : Cell{}, s.date, std::string(to_string(s.status)),
           s.scale_up_topology ? Cell(std::string(to_string(*s.scale_up_topology))) : Cell{},
           s.power_w_per_chip ? Cell(*s.power_w_per_chip) : Cell{}});
  }
  print_table_or(std::cout, t, a.output.json, a.output.csv, "chalk hardware: dense peaks per chip, HBM, FLOPs per byte (lecture 18:00), HBM sweep time (lecture 22:44); status announced = vendor keynote figures", "hardware");
  if (!a.output.json && !a.output.csv && !pcie_only.empty()) {
    std::string list;
    for (const auto& p : pcie_only) list += (list.empty() ? "" : ", ") + p;
    std::cout << "\nscale-up of " << list << ": PCIe only, no NVLink: the chips of a server reach each other through the host's PCIe "
              << "switch at that rate (the up link column, --wide)\n";
  }
}

}  // namespace

void register_catalog(CLI::App& app, Action& run) {
  static thread_local CatalogArgs models, hardware;
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  models = hardware = CatalogArgs{};
  auto* m = app.add_subcommand("models", "List built-in models, or show the given names/paths (HF config.json or chalk-model files)");
  m->add_option("names", models.names, "Model names or paths (default: every built-in model)");
  m->add_option("--kv-dtype", models.kv, "KV-cache format for the KV column")->capture_default_str();
  m->add_option("-s,--context", models.context, "Context length for the per-token columns")->capture_default_str();
  add_output_options(*m, models.output);
  m->callback([&run] { run = [] { run_models(models); }; });

  auto* h = app.add_subcommand("hardware", "List built-in systems, or show the given names/paths (chalk-hardware files)");
  h->add_option("names", hardware.names, "System names or paths (default: every built-in system)");
  add_output_options(*h, hardware.output);
  h->callback([&run] { run = [] { run_hardware(hardware); }; });
}

}  // namespace chalk::cli
