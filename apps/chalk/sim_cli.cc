#include "arg_parse.h"
#include "sim_cli.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/calibrate/profile.h"
#include "table.h"
#include "chalk/io/io.h"
#include "pipeline_cli.h"
#include "request_budget.h"

namespace chalk::cli {

void add_traffic_options(CLI::App& app, TrafficArgs& a, int64_t default_requests) {
  a.requests = default_requests;
  app.add_option("--rate", a.rate, "Mean arrivals per second (requests/s)");
  app.add_option("--rate-per-min", a.rate_per_min, "Mean arrivals per minute (instead of --rate)");
  app.add_option("--arrivals", a.arrivals, "Arrival process: poisson, or gamma with --cv (burstiness)")->capture_default_str();
  app.add_option("--cv", a.cv, "Gamma arrivals: coefficient of variation of the gaps (1 = Poisson; the Azure code trace: 8.6)");
  app.add_option("--requests", a.requests, "Requests to simulate (synthetic traffic)")->capture_default_str();
  app.add_option("--seed", a.seed, "Random seed (the same seed, the same run)")->capture_default_str();
  app.add_option("--input", a.input, "Prompt tokens: N, uniform:MIN:MAX or lognormal:MEAN:SIGMA[:MAX]")->capture_default_str();
  app.add_option("--output", a.output, "Output tokens: N, uniform:MIN:MAX or lognormal:MEAN:SIGMA[:MAX]")->capture_default_str();
  file_name_option(app.add_option("--trace", a.trace, "Trace CSV: arrival_s,input_tokens,output_tokens, optionally then prefix_id,prefix_tokens,session_id (replaces the "
                 "synthetic traffic; the optional columns run the prefix cache)"));
  app.add_option("--prefix-hit-rate", a.prefix_hit_rate,
                 "Simple mode: a fixed fraction of each prompt found in the prefix cache [0-1) (excludes --shared-prefix and --sessions, "
                 "whose hit rate emerges from the cache)")
      ->capture_default_str();
  app.add_option("--shared-prefix", a.shared_prefix,
                 "TOKENS:GROUPS[:S]: each request starts with one of GROUPS system prompts of TOKENS tokens (Zipf exponent S, default 0 = "
                 "uniform); --input is then the tokens after it. Runs the prefix cache (LRU over KV blocks)");
  app.add_option("--sessions", a.sessions,
                 "N:TURNS: multi-turn conversations, N open at once, TURNS turns each; each turn resends the history (previous prompt + "
                 "answer) before its --input new tokens. Runs the prefix cache");
  app.add_option("--kv-offload", a.kv_offload,
                 "host:GB[,ssd:GB][,host-bw:GB/s][,ssd-bw:GB/s]: KV offload tiers behind the prefix cache, GB per replica (vLLM "
                 "--kv-offloading-size, LMCache, KVBM): blocks HBM evicts go to host DRAM, then SSD (LRU each) and are fetched back "
                 "layer by layer when their prefix returns; rates per chip default to the hardware file's (docs/simulator.md 1.8)");
  app.add_option("--lora", a.lora,
                 "N:RANK[,zipf:S][,max-loras:M][,targets:q+k+v+o+gate+up+down]: each request names one of N LoRA adapters of rank RANK "
                 "(popularity uniform, or Zipf with exponent S; a --trace names them in its adapter column); M adapters in HBM slots and "
                 "one batch (vLLM --max-loras, default 1), the rest loaded over the host link on a miss (LRU); steps pay the multi-adapter "
                 "GEMM (docs/simulator.md 1.9)");
}

sim::LoraSpec lora_from(const TrafficArgs& a, const std::vector<sim::Request>& r) {
  int32_t highest = -1;
  for (const auto& q : r) highest = std::max(highest, q.adapter);
  if (a.lora.empty()) {
    if (highest >= 0) throw InputError("--trace", "names LoRA adapters (column adapter); add --lora N:RANK stating them");
    return {};
  }
  const sim::LoraSpec s = sim::parse_lora(a.lora, "--lora");
  if (highest >= s.adapters) {
    throw InputError("--lora", "states " + std::to_string(s.adapters) + " adapters, but the trace names adapter " + std::to_string(highest) +
                                   "; expected N above every adapter id");
  }
  return s;
}

sim::KvOffload kv_offload_from(const TrafficArgs& a, const std::vector<sim::Request>& r) {
  if (a.kv_offload.empty()) return {};
  const sim::KvOffload o = sim::parse_kv_offload(a.kv_offload, "--kv-offload");
  if (o.enabled() && std::none_of(r.begin(), r.end(), [](const sim::Request& q) { return !q.prefix.empty(); })) {
    throw InputError("--kv-offload", "backs the prefix cache, which runs on traffic with token structure: add --shared-prefix or --sessions, "
                                     "or a --trace with prefix columns");
  }
  return o;
}

void add_policy_options(CLI::App& app, PolicyArgs& a) {
  app.add_option("--engine", a.engine,
                 "Scheduler defaults to mimic: vllm, sglang, trtllm (any case), optionally with a release (vllm-0.10: host work after "
                 "each GPU step, before 0.14) (docs/simulator.md)")
      ->capture_default_str();
  app.add_option("--max-batched-tokens", a.max_batched_tokens,
                 "Token budget per step, decodes + prefill chunks, at least --block-size (default: the engine's, 8192: vLLM "
                 "max_num_batched_tokens, SGLang chunked_prefill_size on 80-96 GB GPUs, TensorRT-LLM max_num_tokens)");
  app.add_option("--block-size", a.block_size, "Tokens per paged KV block (default: the engine's: vLLM 16, SGLang page_size 1, TensorRT-LLM tokens_per_block 32)");
  app.add_option("--max-sequences,--max-seqs", a.max_seqs,
                 "Running requests per replica at most (default: the engine's: vLLM max_num_seqs 1024 on >= 70 GiB GPUs (256 on "
                 "smaller), SGLang max_running_requests from the KV pool (4096 here), TensorRT-LLM max_batch_size 2048)");
  auto* util = app.add_option("--gpu-memory-utilization", a.gpu_memory_utilization,
                              "Fraction of each chip's HBM for weights and KV cache, (0, 1] (default 0.9 = 1 - --memory-reserve: vLLM's "
                              "gpu_memory_utilization 0.9; written as SGLang's --mem-fraction-static and TensorRT-LLM's "
                              "free_gpu_memory_fraction of what the weights leave)");
  if (auto* reserve = app.get_option_no_throw("--memory-reserve")) util->excludes(reserve);
  file_name_option(app.add_option("--engine-profile", a.engine_profile,
                 "An engine profile written by `chalk calibrate` (chalk-engine-profile/1): its fitted constants (request overhead, host "
                 "time per sequence, kernel floor) replace the engine's defaults"));
  app.add_option("--chunked-prefill", a.chunked_prefill, "on or off (default: the engine's: on for vLLM and SGLang, off for TensorRT-LLM)");
  app.add_option("--kv-admission", a.kv_admission,
                 "to_completion: admission reserves a request's KV for all its tokens, never preempting (trtllm's default); "
                 "on_demand: blocks as tokens arrive, preempting when full (vllm, sglang) (default: the engine's)");
}

void add_slo_options(CLI::App& app, SloArgs& a) {
  app.add_option("--ttft-slo-ms", a.ttft_ms, "TTFT target at --slo-percentile (ms)");
  app.add_option("--tpot-slo-ms", a.tpot_ms, "TPOT target at --slo-percentile (ms)");
  app.add_option("--slo-percentile", a.percentile, "Percentile the targets apply to, 50..99.9")->capture_default_str();
}

std::vector<sim::Request> traffic_from(const TrafficArgs& a) {
  if (!(a.prefix_hit_rate >= 0 && a.prefix_hit_rate < 1)) {
    throw InputError("--prefix-hit-rate", "must be a fraction in [0, 1), got " + format_number(a.prefix_hit_rate, 4));
  }
  sim::PrefixTraffic structure;
  if (!a.shared_prefix.empty()) structure = sim::parse_shared_prefix(a.shared_prefix, "--shared-prefix", structure);
  if (!a.sessions.empty()) structure = sim::parse_sessions(a.sessions, "--sessions", structure);
  if (structure.enabled() && a.prefix_hit_rate > 0) {
    throw InputError("--prefix-hit-rate", "is the simple mode of prefix caching, got " + format_number(a.prefix_hit_rate, 4) + " with " +
                                              (a.shared_prefix.empty() ? "--sessions" : "--shared-prefix") +
                                              ", whose hit rate emerges from the cache; expected one of the two");
  }
  if (!a.trace.empty()) {
    if (a.rate || a.rate_per_min || a.cv) throw InputError("--trace", "gives the arrivals; drop --rate, --rate-per-min and --cv");
    if (structure.enabled()) {
      throw InputError(a.shared_prefix.empty() ? "--sessions" : "--shared-prefix", "shapes synthetic traffic; a --trace states its own prefixes (columns prefix_id, prefix_tokens, session_id)");
    }
    std::string text;
    try {
      // 1 GiB: the reader's cap of 10,000,000 requests at up to ~100 bytes a line.
      text = read_file(a.trace, 1ull << 30);
    } catch (const InputError& e) {
      throw InputError("--trace", std::string(e.what()));
    }
    a.read = sim::read_trace(text, a.trace);
    std::vector<sim::Request> r = std::move(a.read->requests);
    a.read->requests.clear();
    return r;
  }
  if (a.rate && a.rate_per_min) throw InputError("--rate", "give --rate or --rate-per-min, not both");
  if (!a.rate && !a.rate_per_min) throw InputError("--rate", "state the traffic: --rate (requests/s), --rate-per-min or --trace FILE");
  const double rate = a.rate ? *a.rate : *a.rate_per_min / 60.0;
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw InputError(a.rate ? "--rate" : "--rate-per-min", "must be a positive number, got " + format_number(a.rate ? *a.rate : *a.rate_per_min, 4));
  }
  sim::TrafficSpec t = traffic_shape_from(a);
  t.rate_per_s = rate;
  std::vector<sim::Request> r = sim::generate_traffic(t);
  sim::apply_prefix_traffic(r, structure, t.seed);
  if (!a.lora.empty()) sim::apply_lora_traffic(r, sim::parse_lora(a.lora, "--lora"), t.seed);
  return r;
}

sim::TrafficSpec traffic_shape_from(const TrafficArgs& a) {
  sim::TrafficSpec t;
  if (a.arrivals == "poisson") {
    if (a.cv && *a.cv != 1) throw InputError("--cv", "sets gamma arrivals' burstiness; add --arrivals gamma");
    t.arrivals = sim::Arrivals::poisson;
  } else if (a.arrivals == "gamma") {
    if (!a.cv) throw InputError("--cv", "gamma arrivals need a coefficient of variation (1 = Poisson)");
    t.arrivals = sim::Arrivals::gamma;
    t.cv = *a.cv;
  } else {
    throw InputError("--arrivals", "expected poisson or gamma, got '" + a.arrivals + "'");
  }
  t.requests = a.requests;
  t.seed = a.seed;
  t.input = sim::parse_length(a.input, "--input");
  t.output = sim::parse_length(a.output, "--output");
  return t;
}

std::optional<std::string> context_warning(const ModelSpec& m, const std::vector<sim::Request>& r) {
  int64_t longest = 0, over = 0;
  for (const auto& q : r) {
    longest = std::max(longest, q.input_tokens + q.output_tokens);
    if (q.input_tokens + q.output_tokens > m.max_context) ++over;
  }
  if (m.max_context <= 0 || longest <= m.max_context) return std::nullopt;
  return fmt::format("context {} exceeds {}'s max_position_embeddings {}: {} of {} requests rejected, as vLLM refuses a prompt + max_tokens over "
                     "max_model_len",
                     longest, m.name, m.max_context, over, r.size());
}

void refuse_all_beyond_context(const ModelSpec& m, const std::vector<sim::Request>& r) {
  if (m.max_context <= 0 || r.empty()) return;
  const auto shortest = *std::min_element(r.begin(), r.end(), [](const sim::Request& x, const sim::Request& y) {
    return x.input_tokens + x.output_tokens < y.input_tokens + y.output_tokens;
  });
  if (shortest.input_tokens + shortest.output_tokens <= m.max_context) return;
  throw InputError("--input", fmt::format("every request is beyond {}'s maximum context of {} tokens (the shortest: {} prompt + {} output tokens; "
                                          "max_position_embeddings: an engine refuses each, nothing is served); prompts up to {} tokens fit "
                                          "beside {} output tokens; --allow-infeasible simulates the rejections anyway",
                                          m.name, m.max_context, shortest.input_tokens, shortest.output_tokens,
                                          std::max<int64_t>(0, m.max_context - shortest.output_tokens), shortest.output_tokens));
}

std::vector<std::string> trace_warnings(const TrafficArgs& a) {
  std::vector<std::string> out;
  if (!a.read) return out;
  const std::string name = "trace " + a.trace + " (" + sim::trace_format_name(a.read->format) + "): ";
  if (a.read->rows_skipped > 0) {
    out.push_back(name + std::to_string(a.read->rows_skipped) + " rows with 0 prompt or 0 generated tokens skipped (failed requests)");
  }
  if (a.read->rows_reordered > 0) out.push_back(name + std::to_string(a.read->rows_reordered) + " rows out of time order, sorted");
  return out;
}

namespace {
/// --lora as the traffic line states it: max-loras only where it was stated (simulate runs one
/// slot unless told, plan searches it; review 4 L1: the line echoed max-loras:1 beside a plan
/// that chose 16).
std::string lora_words(const sim::LoraSpec& spec) {
  std::string s = sim::describe_lora(spec);
  if (spec.max_loras_stated) return s;
  const auto at = s.find(",max-loras:");
  if (at == std::string::npos) return s;
  const auto end = s.find(',', at + 1);
  return s.erase(at, end == std::string::npos ? std::string::npos : end - at);
}
}  // namespace

std::string describe_traffic(const TrafficArgs& a, const std::vector<sim::Request>& r) {
  double in = 0, out = 0;
  for (const auto& q : r) {
    in += static_cast<double>(q.input_tokens);
    out += static_cast<double>(q.output_tokens);
  }
  const double n = static_cast<double>(r.size());
  const double span = r.back().arrival_s - r.front().arrival_s;
  const std::string source = !a.trace.empty() ? "trace " + a.trace + (a.read ? " (" + sim::trace_format_name(a.read->format) + ")" : "")
                             : a.arrivals == "gamma" ? fmt::format("gamma arrivals (CV {})", format_number(a.cv.value_or(1), 3))
                                                     : std::string("Poisson arrivals");
  const bool structured = std::any_of(r.begin(), r.end(), [](const sim::Request& q) { return !q.prefix.empty(); });
  std::string prefix = "prefix hits " + format_number(a.prefix_hit_rate, 3);
  if (structured) {
    prefix = "prefix cache over";
    if (!a.shared_prefix.empty()) prefix += " shared prompts " + a.shared_prefix;
    if (!a.sessions.empty()) prefix += std::string(a.shared_prefix.empty() ? "" : ",") + " sessions " + a.sessions;
    if (!a.trace.empty()) prefix += " the trace's prefixes";
  }
  return fmt::format("{} requests, {}, {} req/s over {} s; input mean {} tokens ({}), output mean {} ({}); {}", r.size(), source,
                     readable(span > 0 ? (n - 1) / span : 0, 4), format_number(span, 4), format_number(in / n, 4),
                     a.trace.empty() ? a.input : "trace", format_number(out / n, 4), a.trace.empty() ? a.output : "trace", prefix) +
         (a.lora.empty() ? "" : "; LoRA adapters " + lora_words(sim::parse_lora(a.lora, "--lora")));
}

sim::EnginePolicy policy_from(const PolicyArgs& a) {
  sim::EnginePolicy p = sim::engine_policy(a.engine);
  std::vector<std::string> changed;  // flags that override the engine's defaults, said in `source`
  if (a.max_batched_tokens) p.max_batched_tokens = *a.max_batched_tokens, changed.push_back("--max-batched-tokens");
  if (a.block_size) p.block_size = *a.block_size, changed.push_back("--block-size");
  if (a.max_seqs) p.max_sequences = *a.max_seqs, changed.push_back("--max-sequences");
  if (!a.chunked_prefill.empty()) changed.push_back("--chunked-prefill");
  if (!a.kv_admission.empty()) changed.push_back("--kv-admission");
  if (a.chunked_prefill == "on") {
    p.chunked_prefill = true;
  } else if (a.chunked_prefill == "off") {
    p.chunked_prefill = false;
  } else if (!a.chunked_prefill.empty()) {
    throw InputError("--chunked-prefill", "expected on or off, got '" + a.chunked_prefill + "'");
  }
  if (a.kv_admission == "to_completion") {
    p.reserve_to_completion = true;
  } else if (a.kv_admission == "on_demand") {
    p.reserve_to_completion = false;
  } else if (!a.kv_admission.empty()) {
    throw InputError("--kv-admission", "expected to_completion or on_demand, got '" + a.kv_admission + "'");
  }
  if (a.gpu_memory_utilization) changed.push_back("--gpu-memory-utilization");
  if (!changed.empty()) {
    std::string flags;
    for (const auto& f : changed) flags += (flags.empty() ? "" : ", ") + f;
    p.source = "defaults: " + p.source + "; overridden by " + flags;
  }
  if (a.profile) {
    sim::apply(a.profile->constants, p);
    p.source += "; constants from the engine profile " + a.profile->source;
  }
  sim::validate(p);
  return p;
}

double memory_utilization_from(const PolicyArgs& a, double memory_reserve) {
  if (!a.gpu_memory_utilization) return 1.0 - memory_reserve;
  const double u = *a.gpu_memory_utilization;
  if (!(u > 0 && u <= 1)) throw InputError("--gpu-memory-utilization", "expected a fraction of HBM in (0, 1], got " + format_number(u, 4));
  return u;
}

void apply_modes(const std::string& modes, bool& aggregated, bool& disaggregated) {
  if (modes == "aggregated") {
    disaggregated = false;
  } else if (modes == "disaggregated") {
    aggregated = false;
  } else if (modes != "both") {
    throw InputError("--modes", "expected both, aggregated or disaggregated, got '" + modes + "'");
  }
}

sim::Slo slo_from(const SloArgs& a) {
  sim::Slo s;
  for (const auto& [v, flag] : {std::pair{a.ttft_ms, "--ttft-slo-ms"}, std::pair{a.tpot_ms, "--tpot-slo-ms"}}) {
    if (v && !(*v > 0 && std::isfinite(*v))) throw InputError(flag, "must be a positive number of milliseconds, got " + format_number(*v, 4));
  }
  if (a.ttft_ms) s.ttft_s = *a.ttft_ms / 1e3;
  if (a.tpot_ms) s.tpot_s = *a.tpot_ms / 1e3;
  s.percentile = a.percentile;
  sim::validate(s);
  return s;
}

void with_flag_names(const std::function<void()>& body) {
  static const std::map<std::string, std::string> flags = {
      {"rate", "--rate"}, {"cv", "--cv"}, {"requests", "--requests"}, {"input", "--input"}, {"output", "--output"},
      {"max_batched_tokens", "--max-batched-tokens"}, {"block_size", "--block-size"}, {"max_sequences", "--max-sequences"},
      {"prefix_hit_rate", "--prefix-hit-rate"}, {"slo_percentile", "--slo-percentile"}, {"ttft_slo", "--ttft-slo-ms"},
      {"tpot_slo", "--tpot-slo-ms"}, {"slo", "--ttft-slo-ms"}, {"engine", "--engine"}, {"replicas", "--replicas"},
      {"prefill_replicas", "--prefill-replicas"}, {"decode_replicas", "--decode-replicas"}, {"chips", "--chips"},
      {"usd_budget", "--usd-per-hour"}, {"replica_chips", "--replica-chips"}};
  try {
    body();
  } catch (const WorkLimitError&) {
    throw;  // a web request's budget (request_budget.h): its field is already the API's
  } catch (const InputError& e) {
    const auto it = flags.find(e.field());
    if (it == flags.end()) throw;
    throw InputError(it->second, std::string(e.what()).substr(e.field().size() + 2));
  }
}

std::optional<double> pool_usd_per_hour(const Deployment& d, int64_t replicas) {
  if (!d.price_per_chip) return std::nullopt;
  return static_cast<double>(replicas * d.n_chips) * to_usd_per_hour(*d.price_per_chip);
}

Deployment deployment_with_chips(const DeploymentArgs& a, int64_t chips, int64_t context, std::optional<ReplicaNote>* note,
                                 const std::string& hardware) {
  DeploymentArgs d = a;
  d.chips = chips;
  if (!hardware.empty()) d.hardware = hardware;
  return resolve(d, context, note);
}

Deployment pool_deployment(const DeploymentArgs& a, const char* flag, const std::string& hardware, std::optional<int64_t> chips,
                           int64_t context, std::optional<ReplicaNote>* note) {
  try {
    return deployment_with_chips(a, chips.value_or(0), context, note, hardware);
  } catch (const InputError& e) {
    throw InputError(flag, hardware + ": " + e.what());
  }
}

SimPipeline simulate_pipeline(const DeploymentArgs& a, int64_t pp, int64_t context) {
  DeploymentArgs per_stage = a;
  per_stage.layout_chooser = nullptr;  // it scores whole replicas, not one stage of a pipeline
  per_stage.layout_note = nullptr;
  PipelineArgs p;
  p.pp = pp;
  SimPipeline out;
  out.stage = resolve_pipeline_stage(per_stage, p, context);
  out.pp = pp;
  const std::string inner = out.stage.mechanisms.enabled ? describe_layout(out.stage.mechanisms.layout, !out.stage.moe.empty()) : "roofline";
  out.layout = fmt::format("PP{} x ({})", pp, inner);
  out.text = fmt::format("pipeline    {} stages x {} = {} chips ({} layers a stage), {} microbatches in flight: a request's tokens are one "
                         "pass of every stage apart, the replica serves {} stages' work at once (docs/simulator.md 1.10)\n",
                         pp, counted(out.stage.n_chips, "chip"), out.stage.n_chips * pp, n_layers(out.stage.model), pp, pp);
  return out;
}

}  // namespace chalk::cli
