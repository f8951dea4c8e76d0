// The keys and items of the step dicts module.cc's to_dict builds (the CLI's row columns).
#pragma once

#include <cstdint>

#include <pybind11/pybind11.h>

#include "chalk/base/units.h"
#include "chalk/engine/roofline.h"

namespace chalk::python {

namespace py = pybind11;

// to_dict's keys, made once: a str per key per call (PyUnicode_FromString) cost about as
// much as the rest of the dict. Interned, released at exit like chalk_error below.
struct Keys {
  py::handle batch, context_tokens, prompt_tokens, prefix_tokens, t_compute_ms, t_weights_ms, t_kv_ms, t_operations_ms,
      t_comm_ms, t_overhead_ms, t_step_ms, ttft_ms, bound, governs, tok_per_s, tok_per_s_per_user, tok_per_s_per_chip,
      cost_usd_per_mtok, experts_touched_per_layer, experts_on_busiest_chip, memory_fits, max_batch_at_context, t_step_roofline_ms,
      ttft_roofline_ms, t_draft_ms, t_host_ms, t_launch_ms, graph_batch;
};

inline const Keys& keys() {
  static const Keys k = [] {
    auto key = [](const char* name) { return py::handle(PyUnicode_InternFromString(name)); };
    return Keys{key("batch"), key("context_tokens"), key("prompt_tokens"), key("prefix_tokens"), key("t_compute_ms"),
                key("t_weights_ms"), key("t_kv_ms"), key("t_operations_ms"), key("t_comm_ms"), key("t_overhead_ms"),
                key("t_step_ms"), key("ttft_ms"), key("bound"), key("governs"), key("tok_per_s"), key("tok_per_s_per_user"),
                key("tok_per_s_per_chip"), key("cost_usd_per_mtok"), key("experts_touched_per_layer"),
                key("experts_on_busiest_chip"), key("memory_fits"), key("max_batch_at_context"), key("t_step_roofline_ms"),
                key("ttft_roofline_ms"), key("t_draft_ms"), key("t_host_ms"), key("t_launch_ms"), key("graph_batch")};
  }();
  return k;
}

// One dict item: PyDict_SetItem borrows the key and takes its own reference to the value.
inline void put(py::dict& o, py::handle key, py::object value) {
  if (PyDict_SetItem(o.ptr(), key.ptr(), value.ptr()) != 0) throw py::error_already_set();
}

inline py::object ms(Seconds t) { return py::float_(to_ms(t)); }

// The pipeline columns of a step without stages, as the CLI's rows carry them (one stage, one
// microbatch, no hop; apps/chalk/pipeline_rows.cc one_stage_cells; review 4 M6).
inline void put_one_stage(py::dict& o, int64_t batch, Seconds step, const MemoryPlan& mem, bool prefill) {
  o["pp"] = 1, o["microbatches"] = 1, o["microbatch"] = batch, o["t_stage_ms"] = to_ms(step), o["t_hop_ms"] = 0.0;
  if (!prefill) o["t_pass_ms"] = to_ms(step), o["stage_busy"] = 1.0;
  o["stage_weights_gb"] = to_gb(mem.weights), o["stage_kv_gb"] = to_gb(mem.kv_cache);
}

}  // namespace chalk::python
