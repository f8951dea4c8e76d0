// The deployment, output and eplb flags every command shares, and the checks a flag's value
// needs before a deployment is resolved (deployment_options.h; resolving it:
// deployment_options.cc).
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "deployment_options.h"

namespace chalk::cli {

namespace {
// Per thread, as the commands' options are (the web API parses a request's command line on
// its own thread), and reset whenever the options are registered, before each parse.
thread_local bool g_hardware_stated = false;
}  // namespace

bool hardware_stated() { return g_hardware_stated; }
void set_hardware_stated(bool stated) { g_hardware_stated = stated; }
std::string default_hardware_note() { return g_hardware_stated ? std::string() : std::string(" (the default; -H sets it)"); }

void add_deployment_options(CLI::App& app, DeploymentArgs& a, bool layout_flags) {
  set_hardware_stated(false);
  app.add_option("-m,--model", a.model, "Built-in model name (see `chalk models`) or path to a HF config.json / chalk-model file (train step, memory "
                 "and layouts default to llama-3.1-70b, a dense plan as the published Megatron ones)")
      ->capture_default_str();
  app.add_option("-H,--hardware", a.hardware, "Built-in system name (see `chalk hardware`) or path to a chalk-hardware file")
      ->capture_default_str()
      ->each([](const std::string&) { set_hardware_stated(true); });
  app.add_option("-n,--chips", a.chips, "Chips holding one replica, 1..1048576 (default, printed as `replica`: for costs and throughput the cheapest replica size within the scale-up domain; for decode and step the smallest that holds the weights and one sequence)")
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
                                 "The lecture's roofline at the achievable rates (the matmul and HBM efficiencies printed, not datasheet "
                                 "peaks): no collectives, kernel floor or kernel efficiencies (default: the engine step, docs/accuracy.md)");
  auto* mech = app.add_flag("--mechanisms", a.mechanisms, "Accepted for compatibility: the engine step is now the default");
  roofline->excludes(mech);
  app.add_option("--tp", a.tp,
                 "Tensor-parallel degree of attention and dense FFNs; 1 = data-parallel attention (default: the layout "
                 "search's best for the chips; see `chalk layouts`)");
  app.add_option("--ep", a.ep, "Expert-parallel degree of routed experts (default: the layout search's best)");
  app.add_flag("--two-batch-overlap", a.two_batch_overlap,
               "Two micro-batches hide expert-parallel traffic behind compute (DeepSeek/SGLang; needs --tp below the "
               "chips; a decode step splits only when every data-parallel rank holds 2+ sequences)");
  app.add_flag("--enforce-eager", a.enforce_eager,
               "No CUDA graphs (vLLM's --enforce-eager): every step runs eagerly, at least its kernels x the host's "
               "launch time (default: the engine's captured batch sizes, padded up; eager above the largest)");
  add_eplb_option(app, a);
  app.add_option("--dispatch-dtype", a.dispatch_dtype,
                 "Format of the expert-parallel dispatch: bf16, fp8, nvfp4, ... (default: bf16; the combine stays bf16)");
}

void add_eplb_option(CLI::App& app, DeploymentArgs& a) {
  app.add_option("--eplb", a.eplb,
                 "Routed experts against a learned router's skew: no = experts in order (engines' default; the busiest EP rank "
                 "from TensorRT-LLM's DeepSeek-R1 expert loads), yes = EPLB's redundant experts (default: uniform routing, "
                 "the lower bound)");
}

void add_infeasible_option(CLI::App& app, DeploymentArgs& a) {
  app.add_flag("--allow-infeasible", a.allow_infeasible,
               "Print the figures even when the stated chips cannot hold the weights or the sequence passes the model's maximum "
               "context (default: exit 2 naming the smallest replica that fits, or the limit)");
}

void refuse_beyond_max_context(const DeploymentArgs& a, const ModelSpec& model, int64_t tokens, const std::string& field) {
  if (a.allow_infeasible || model.max_context <= 0 || tokens <= model.max_context) return;
  throw InputError(field, fmt::format("{} tokens is beyond {}'s maximum context of {} tokens (max_position_embeddings: an engine "
                                      "refuses the request); --allow-infeasible prices it anyway",
                                      tokens, model.name, model.max_context));
}

std::vector<std::string> hardware_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) throw InputError("--hardware", "expected a comma list of systems or files, got '" + text + "'");
    if (std::find(out.begin(), out.end(), item) != out.end()) throw InputError("--hardware", "'" + item + "' is listed twice in '" + text + "'");
    out.push_back(item);
  }
  if (out.empty() || text.back() == ',') throw InputError("--hardware", "expected a comma list of systems or files, got '" + text + "'");
  return out;
}

void add_output_options(CLI::App& app, OutputArgs& o) {
  auto* j = app.add_flag("--json", o.json, "Print JSON");
  auto* c = app.add_flag("--csv", o.csv, "Print CSV");
  j->excludes(c);
  app.add_flag("--wide", wide_tables(), "Print every column of the table (default: what fits the terminal, 100 columns without one)");
  app.add_flag("-q,--quiet", quiet_tables(), "Print only the table(s): no title, notes or explanations (text output; --json and --csv are unchanged)");
}

}  // namespace chalk::cli
