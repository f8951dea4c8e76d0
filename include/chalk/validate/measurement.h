// The measurement format (issue 15; docs/file-formats.md, "Measurements"): one measured
// run per CSV row, every input of a prediction in its own column with a fixed vocabulary.
// Free text appears only in the provenance columns (source, location, confidence, notes),
// which nothing reads for a prediction. The format is a public contract: columns may be
// added, never renamed or given a new meaning.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chalk {

/// One measured run, as its row states it. An empty cell is an unset optional (or an empty
/// string): an input the run did not state. Nothing here is a default: validate fills the
/// defaults and prints each among the row's assumptions.
struct Measurement {
  std::string file;      ///< the file the row was read from, as named to parse_measurements ("" = not from a file)
  int64_t line = 0;      ///< 1-based line of the row's start in its file
  std::string base_dir;  ///< directory a relative `model` or `hardware` path is read from ("" = cwd)

  std::string id;
  std::string kind;      ///< decode, prefill, serving, training, run, microbenchmark
  std::string model;     ///< built-in name, HF repo id, or path (relative to the CSV)
  std::string hardware;  ///< built-in system name or path
  std::optional<int64_t> chips;  ///< all chips of the measured system
  /// Degrees. Serving: tp = attention's tensor-parallel degree within a replica, ep the
  /// expert-parallel degree, dp the independent replicas in the measured system. Training:
  /// Megatron's meanings.
  std::optional<int64_t> tp, pp, dp, ep, expert_tp, cp;
  std::string attention;           ///< tp, dp (data-parallel attention over a replica's chips)
  std::string ffn_layout;          ///< tp (1D weight-stationary), ws2d, wg (Pope et al. 2022 section 3.2)
  std::string prefill_ffn_layout;  ///< a serving run's prefill FFN layout where it differs
  std::string kv_split;            ///< heads or batch: how a single KV head / MLA latent is split (Pope 3.3)
  std::optional<int64_t> padded_heads;  ///< attention heads padded to this count for partitioning

  std::string weights;  ///< a format, or part=format pairs separated by ';'
  std::string kv, dispatch, combine, compute;  ///< formats

  std::string batch;     ///< a positive integer, or "max"
  std::string batch_per; ///< run, replica, chip
  std::optional<int64_t> prefill_batch;  ///< serving latency: prompts prefilled together (empty: the batch)
  std::optional<int64_t> requests;       ///< requests the run sends (caps a `max` batch)
  std::optional<double> request_rate_per_s;
  /// How the requests of a `request_rate_per_s` row arrived: poisson (exponential gaps) or
  /// constant (one every 1 / rate seconds: inference-perf's load type `constant`, vLLM's
  /// `benchmark_serving --burstiness` infinite); empty: poisson
  std::string arrivals;
  std::optional<int64_t> input_tokens, cached_tokens, output_tokens, context;
  /// A benchmark dataset named instead of lengths (data/datasets/datasets.csv): an empty
  /// input_tokens or output_tokens takes the dataset's published mean
  std::string dataset;
  std::optional<int64_t> draft_tokens;
  std::optional<double> accepted_tokens;
  /// What drafts: mtp (the model's own MTP module) or a drafter of
  /// data/drafters/acceptance.csv (eagle3); empty: the model's MTP module where it has one
  std::string drafter;
  std::optional<int64_t> attention_draft_tokens;  ///< drafts attention alone is slowed by (MTP emulation)
  std::string two_batch_overlap;  ///< yes, no
  /// Serving rows with expert parallelism: yes (EPLB's redundant experts), no (a learned
  /// router's skew, experts in order); empty: uniform routing (ExpertBalance, expert_skew.h)
  std::string eplb;
  /// Training rows: deepep (DeepEP/HybridEP, Megatron-Core's flex) or alltoall (NCCL
  /// all-to-all); empty: deepep (EpDispatcher, chalk/training/plan.h)
  std::string ep_dispatcher;
  std::string ep_overlap;  ///< training rows: yes (Megatron-Core's EP overlap), no; empty: no
  /// Training rows: yes, no (tensor parallelism without Korthikanti et al. 2022's sequence
  /// parallelism, as Megatron-LM ran before it: Narayanan et al. 2021, MT-NLG); empty: yes when tp > 1
  std::string sequence_parallel;
  /// Training rows with compute fp8 or mxfp8: delayed, tensorwise, mxfp8, blockwise
  /// (Fp8Recipe, chalk/training/plan.h); empty: read from compute and engine (docs/file-formats.md)
  std::string fp8_recipe;
  std::string engine;
  /// Training rows of engine torchtitan: yes (its blocks under torch.compile: fused
  /// memory-bound kernels), no (PyTorch eager); empty: no, torchtitan's default
  /// (TrainingPlan::compile, chalk/training/plan.h)
  std::string compile;
  /// to_completion (a request's KV reserved for all its tokens at admission: TensorRT-LLM's
  /// GUARANTEED_NO_EVICT) or on_demand (blocks as tokens arrive); empty: the engine's default
  std::string kv_admission;
  /// yes: prompts split into chunks that ride in decode steps; no: each prompt runs whole
  /// in one step; empty: the engine's default (no for trtllm, yes otherwise)
  std::string chunked_prefill;
  /// The engine's scheduler knobs as the run set them (empty: the engine's defaults,
  /// sim::engine_policy): the token budget of one step (vLLM max_num_batched_tokens, SGLang
  /// chunked_prefill_size, TensorRT-LLM max_num_tokens), the running-sequence cap of one
  /// engine instance (max_num_seqs, max_running_requests, max_batch_size), and the HBM
  /// fraction the engine may fill with weights, activations and KV (vLLM
  /// gpu_memory_utilization; chalk's reserve is 1 minus it).
  std::optional<int64_t> max_batched_tokens, max_sequences;
  std::optional<double> gpu_memory_utilization;
  /// Host memory for KV blocks the HBM evicts, GB per replica (vLLM --kv-offloading-size,
  /// which is in GiB: 8 GiB = 8.59 GB; LMCache's local CPU backend); >= 0. Read by serving
  /// rows through the simulator; see validate_plan.cc for what it changes.
  std::optional<double> kv_offload_gb;

  std::optional<int64_t> microbatch, virtual_stages;
  std::string schedule, recompute, zero;
  std::optional<double> train_tokens;
  /// Training: tokens per step (global batch x sequence length), as model cards state it
  /// ("4M tokens per batch"); an empty batch is step_tokens / input_tokens
  std::optional<double> step_tokens;

  std::string operation, shape;  ///< microbenchmarks
  std::optional<double> message_bytes;

  std::string metric;
  double value = 0;
  std::vector<std::string> assumed;         ///< columns the row's author filled in
  std::vector<std::string> assumed_values;  ///< their cells, as written (parallel to `assumed`)
  std::string source, location, confidence, notes;
};

/// Every column of the format, in the order of the built-in file (whose header leaves out
/// `dataset` and `step_tokens`, which none of its rows uses).
const std::vector<std::string>& measurement_columns();

/// A row that could not be read, with why.
struct UnreadableRow {
  std::string id;  ///< "" when the id itself is missing
  int64_t line = 0;
  std::string error;  ///< "<where>: line N: <id>: <column>: <message>"
};

struct MeasurementFile {
  std::vector<Measurement> rows;
  std::vector<UnreadableRow> unreadable;  ///< only when keep_going
};

/// Parses CSV text (RFC 4180: quoted fields may hold commas, newlines and doubled quotes).
/// The header names columns of measurement_columns() in any order; a column left out is
/// empty in every row; `id`, `kind`, `metric` and `value` must be present. A pure function
/// (no I/O), so a fuzzing harness can call it on any bytes.
///
/// Throws InputError naming `where`, the line, the row id and the column for: an unknown or
/// repeated column, an unterminated quote, a row with the wrong number of fields, an empty
/// or repeated id, a value outside a closed vocabulary, a malformed number, a metric the
/// kind does not have, or a missing input the row's kind and metric need (the table in
/// docs/file-formats.md). With `keep_going`, a bad row goes to `unreadable` instead and
/// parsing goes on (header and quoting errors still throw). `base_dir` is stored in each
/// row for resolving relative paths.
MeasurementFile parse_measurements(std::string_view csv_text, const std::string& where, bool keep_going = false,
                                   const std::string& base_dir = "");

/// The repository's own rows, data/measurements/measurements.csv (compiled in).
std::vector<Measurement> builtin_measurements();

}  // namespace chalk
