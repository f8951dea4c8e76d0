// Running validation over rows, and the error summaries (docs/accuracy.md).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "chalk/base/error.h"
#include "chalk/engine/collective.h"
#include "validate_internal.h"

namespace chalk {

std::string_view to_string(RowStatus s) {
  switch (s) {
    case RowStatus::predicted: return "predicted";
    case RowStatus::not_modelled: return "not modelled";
    case RowStatus::calibration: return "calibration";
    case RowStatus::unreadable: return "unreadable";
    case RowStatus::rejected: return "rejected";
  }
  return "?";
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) throw InputError("percentile", "no values");
  if (!(p >= 0 && p <= 1)) throw InputError("percentile", "p must be in [0, 1], got " + std::to_string(p));
  std::sort(v.begin(), v.end());
  const double pos = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::vector<ErrorSummary> summarize(const std::vector<Prediction>& rows) {
  std::vector<ErrorSummary> out;
  for (const char* kind : {"decode", "prefill", "serving", "training", "run", "all"}) {
    for (const char* subset : {"all rows", "fully specified", "with assumptions"}) {
      std::vector<double> mech, plain;
      for (const auto& r : rows) {
        if (r.status != RowStatus::predicted) continue;
        if (std::string(kind) != "all" && r.kind != kind) continue;
        if (std::string(subset) == "fully specified" && !r.fully_specified()) continue;
        if (std::string(subset) == "with assumptions" && r.fully_specified()) continue;
        mech.push_back(std::abs(r.error));
        plain.push_back(std::abs(r.error_plain));
      }
      if (mech.empty()) continue;
      ErrorSummary s;
      s.kind = kind;
      s.subset = subset;
      s.count = static_cast<int64_t>(mech.size());
      s.median_abs = percentile(mech, 0.5);
      s.p90_abs = percentile(mech, 0.9);
      s.median_abs_plain = percentile(plain, 0.5);
      s.p90_abs_plain = percentile(plain, 0.9);
      out.push_back(s);
    }
    if (std::string(kind) == "serving") {
      // Per metric (issue 29's goal): |error| of the serving rows of each metric key.
      std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_metric;
      for (const auto& r : rows) {
        if (r.status != RowStatus::predicted || r.kind != kind) continue;
        by_metric[r.metric].first.push_back(std::abs(r.error));
        by_metric[r.metric].second.push_back(std::abs(r.error_plain));
      }
      for (const auto& [metric, errors] : by_metric) {
        ErrorSummary s;
        s.kind = kind;
        s.subset = "all rows";
        s.metric = metric;
        s.count = static_cast<int64_t>(errors.first.size());
        s.median_abs = percentile(errors.first, 0.5);
        s.p90_abs = percentile(errors.first, 0.9);
        s.median_abs_plain = percentile(errors.second, 0.5);
        s.p90_abs_plain = percentile(errors.second, 0.9);
        out.push_back(s);
      }
    }
  }
  return out;
}

namespace {

std::string message_of(const InputError& e) { return std::string(e.what()).substr(e.field().size() + 2); }

/// An error about `row` named as docs/file-formats.md promises: "file: line N: id: column:
/// message" (the CSV reader's own errors already are; those from resolving or planning a
/// row name the id and the column only).
InputError located(const Measurement& row, const InputError& e) {
  std::string field = e.field();
  if (field.rfind(row.id + ":", 0) != 0) field = row.id + ": " + field;
  if (!row.file.empty() && field.rfind(row.file + ":", 0) != 0) field = row.file + ": line " + std::to_string(row.line) + ": " + field;
  return InputError(field, message_of(e));
}

/// The CSV column a training plan's field comes from (docs/file-formats.md, "Measurements"):
/// a rejected row names what its author wrote, not the plan's internal name.
std::string csv_column(const std::string& plan_field) {
  static const std::pair<const char*, const char*> columns[] = {
      {"global_batch", "batch"}, {"seq_len", "input_tokens"}, {"zero_stage", "zero"}, {"etp", "expert_tp"}};
  for (const auto& [field, column] : columns) {
    if (plan_field == field) return column;
  }
  return plan_field;
}

/// The CSV column of a serving layout field the engine names (parallel_layout.cc): a row
/// whose stated layout the engine refuses names the column its author wrote.
std::string layout_column(const std::string& engine_field) {
  static const std::pair<const char*, const char*> columns[] = {{"layout.tp_attention", "tp"},
                                                                {"layout.tp_ffn", "ffn_layout"},
                                                                {"layout.ep", "ep"},
                                                                {"layout.tp_expert", "expert_tp"},
                                                                {"layout.dispatch_bytes_per_element", "dispatch"}};
  for (const auto& [field, column] : columns) {
    if (engine_field == field) return column;
  }
  return engine_field;
}

std::string rejected_reason(const InputError& e) {
  return "chalk rejected the row's inputs: " + csv_column(e.field()) + ": " + message_of(e);
}

/// A training or run row: read (unreadable on a field chalk cannot use), then predicted
/// (rejected when the training module refuses the plan).
void predict_training_row(const Measurement& row, Prediction& pr, bool keep_going) {
  std::optional<detail::TrainRowPlan> plan;
  try {
    plan = detail::plan_training_row(row);
  } catch (const InputError& e) {
    if (e.field().rfind(row.id + ":", 0) == 0) {  // a field chalk cannot use
      if (!keep_going) throw located(row, e);
      pr.status = RowStatus::unreadable;
      pr.reason = located(row, e).what();
    } else {  // a stated plan the training module refuses (it does not divide, no rate)
      pr.status = RowStatus::rejected;
      pr.reason = rejected_reason(e);
    }
    return;
  }
  pr.status = RowStatus::predicted;
  pr.assumptions = plan->assumptions;
  pr.notes = plan->notes;
  try {
    detail::predict_training(*plan, pr);
    pr.error = pr.predicted / pr.measured - 1;
    pr.error_plain = pr.predicted_plain / pr.measured - 1;
  } catch (const InputError& e) {
    pr.status = RowStatus::rejected;
    pr.reason = rejected_reason(e);
  }
}

}  // namespace

ValidationReport validate_measurements(const std::vector<Measurement>& rows, bool keep_going, const sim::EngineProfile* profile) {
  ValidationReport report;
  for (const auto& row : rows) {
    Prediction pr;
    pr.id = row.id;
    pr.kind = row.kind;
    pr.metric = row.metric;
    pr.unit = detail::metric_unit(row.metric);
    pr.measured = row.value;
    if (row.kind == "training" || row.kind == "run") {
      predict_training_row(row, pr, keep_going);
      report.rows.push_back(std::move(pr));
      continue;
    }
    detail::Mapped mapped;
    try {
      mapped = detail::plan_row(row);
    } catch (const InputError& e) {
      if (!keep_going) throw located(row, e);
      mapped = {std::nullopt, RowStatus::unreadable, located(row, e).what()};
    }
    pr.status = mapped.status;
    pr.reason = mapped.reason;
    if (mapped.plan) {
      pr.assumptions = mapped.plan->assumptions;
      pr.notes = mapped.plan->notes;
      if (profile && !profile->engine.empty() && sim::known_engine_family(mapped.plan->engine) == profile->engine) {
        mapped.plan->profile = profile->constants;
        pr.notes.push_back("engine profile " + profile->source + " applied (chalk calibrate)");
      }
      try {
        detail::predict(*mapped.plan, pr);
        pr.error = pr.predicted / pr.measured - 1;
        pr.error_plain = pr.predicted_plain / pr.measured - 1;
      } catch (const InputError& e) {
        if (e.field() == "memory") {  // valid but infeasible: no batch fits (a value, docs/formulas.md 5, memory fit)
          pr.status = RowStatus::rejected;
          pr.reason = std::string("chalk rejected the row's inputs: ") + e.what();
        } else {  // an input the engine refuses (a layout that does not divide): the row's error
          const InputError at_column(layout_column(e.field()), message_of(e));
          if (!keep_going) throw located(row, at_column);
          pr.assumptions.clear();  // an unreadable row lists only its reason
          pr.notes.clear();
          pr.status = RowStatus::unreadable;
          pr.reason = located(row, at_column).what();
        }
      }
    }
    report.rows.push_back(std::move(pr));
  }
  report.summary = summarize(report.rows);
  return report;
}

ModelSpec measurement_model(const Measurement& row) { return detail::load_row_model(detail::resolve_model(row)); }

std::vector<Prediction> unreadable_rows(const MeasurementFile& file) {
  std::vector<Prediction> out;
  for (const auto& u : file.unreadable) {
    Prediction p;
    p.id = u.id.empty() ? "(line " + std::to_string(u.line) + ")" : u.id;
    p.status = RowStatus::unreadable;
    p.reason = u.error;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<CalibrationEntry> calibration_entries() {
  const Calibration c;
  return {
      {"matmul_efficiency", 0, "MAMF-BF16-*, MAMF-FP8-*",
       "per chip and dtype in data/hardware/*.json (efficiency.matmul): best-shape torch matmul over dense peak, stas00/ml-engineering @744d01e"},
      {"hbm_efficiency", 0, "AZURE-HBM-*", "per chip in data/hardware/*.json (efficiency.hbm): STREAM Copy over peak, Azure/AI-benchmarking-guide @8fd0c6e"},
      {"kernel_floor_us", to_us(c.kernel_floor), "AZURE-GEMM-FP8-H100",
       "cuBLASLt FP8 on H100: t = t0 + flops / 1382 TF; 1024^3 at 274 TF -> 7.84 us -> t0 = 6.3 us (4096^3 predicted 105.7 us, measured 112.9)"},
      {"weight_stream_fraction", c.weight_stream_fraction, "DEEPGEMM-2",
       "FP8 GEMM M=64 N=7168 K=16384 on H800 streams 2668 of 3350 GB/s, its fixed time included (all weights but the next row's)"},
      {"weight_stream_fraction_16bit", c.weight_stream_fraction_16bit, "-",
       "16-bit weights in vLLM on GPUs, beyond the kernel floor: cuBLAS bf16 on H100 (vLLM PR #49363, K=5376, N=12288 vs 43008), slope 2.96-3.16 TB/s at M=1-128, mean 3.051 of 3350 GB/s"},
      {"attention_hbm_fraction", 3000.0 / 3350.0, "FLASHMLA-1",
       "MLA decode, memory-bound: 3000 of 3350 GB/s on H800; a check only: the KV cache streams at each chip's efficiency.hbm (H800 87%)"},
      {"attention_compute_fraction", c.attention_compute_fraction, "FLASHMLA-1", "MLA decode, compute-bound: 660 of 989.4 bf16 TFLOP/s (capped at the chip's bf16 matmul fraction)"},
      {"scale_up_achieved_fraction", kScaleUpAchievedFraction, "AZURE-NCCL-H100 (check); training-and-systems.md 5.3",
       "ring all-reduce busBW 367 of 450 GB/s (8xH200) and 682 of 900 (8xB200); EP NVLink 153-158 of ~200 GB/s (DEEPEP-NORMAL); "
       "a system may state its own (scale_up.collective_efficiency, collective_latency_s: MI300X/MI325X RCCL 0.706, 69 us)"},
      {"scale_out_achieved_fraction", kScaleOutAchievedFraction, "DEEPEP-LL-EP128-*", "low-latency dispatch/combine 39 GB/s per GPU over all copies; the 15/16 bound for other nodes on the 50 GB/s NIC"},
      {"communication_sm_fraction", c.communication_sm_fraction, "-", "DeepSeek-V3 report 3.2.2: 20 of 132 SMs run communication while it overlaps compute"},
      {"overlapped_all_to_all_slowdown", 2.0900 / 1.5207, "-",  // kOverlappedAllToAllSlowdown of src/engine/overhead.cc
       "DeepSeek prefill profile (EP32, 4K, 16,384 tok/H800, balanced): 62,713 tok/s/node = 2.090 s/step against 1.521 s of normal-kernel traffic at unit-test rates"},
      {"nccl_ring_latency_us", 6.6, "-", "NCCL 2.30.7 tuning.cc: ring LL base 6.6 us + 0.6 us per NVLink step (LL128 14 + 1.9, Simple 8.4 + 3.4); network steps 2.7 / 4.0 / 14"},
      {"nccl_ll_bandwidth_fraction", kLowLatencyProtocolFraction, "AZURE-NCCL-H100",
       "1 MB all-reduce on 8 x H100 in 42.0 us = 15.0 us ring-LL latency + 1.835 MB at 68 GB/s (0.19 of 360); the 16 MB point (125.5 us) is then LL128's 127.6 us"},
      {"eager_launch_us", kEagerLaunchSPerKernel * 1e6, "-",  // chalk/engine/cuda_graphs.h
       "host time per kernel of an eager (CUDA-graph-less) step: Llama 3.1 8B on H100 SXM5 at batch 1, 8.4 ms eager (launch-bound; 5.1 ms as a graph, cloudai.pt 2026) over its 292 kernels"},
      {"ici_hop_latency_us", 1.0, "-", "TPU ICI, about 1 us per hop (scaling-book sharding.md)"},
      {"ici_collective_base_us", 5.0, "-", "scaling-book sharding.md: a latency-bound 3-hop all-gather measured 8 us against 3 us of hops"},
  };
}

}  // namespace chalk
