// The Python module chalk._chalk (pybind11): the in-process command line (every command's
// --json, the same code as `chalk`), deployments with fast decode and prefill steps, and
// the vectorised roofline sweep. python/chalk/__init__.py wraps it; python/README.md.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "chalk/base/error.h"
#include "chalk/engine/roofline.h"
#include "cli_inprocess.h"
#include "deployment_options.h"
#include "docstrings.h"
#include "numpy_columns.h"
#include "roofline_sweep.h"
#include "step_keys.h"

namespace py = pybind11;
using namespace chalk;
using chalk::python::column;
using chalk::python::out_column;
using chalk::python::Keys;
using chalk::python::keys;
using chalk::python::ms;
using chalk::python::put;
using chalk::python::put_one_stage;

namespace {

py::object none_or(const std::optional<UsdPerToken>& c) { return c ? py::object(py::float_(to_usd_per_mtok(*c))) : py::object(py::none()); }

py::object json_loads(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

// A step with the deployment it was priced on (the Python object, kept alive by it), so
// that to_dict carries what the CLI's row does beside the step: the memory fit, the
// largest batch at the context and the roofline, computed only when a dict is asked for.
struct DecodeRow : DecodeStep {
  py::object deployment;
  bool memory_fits = true;  ///< memory_plan(batch, context).fits, shown by the repr (review 3 L10)
};
struct PrefillRow : PrefillStep {
  py::object deployment;
  bool memory_fits = true;
};

// As `chalk decode` and `chalk prefill`: a batch the replica cannot hold is not priced (issue 30).
template <class Row>
Row priced_if_fits(Row row, const Deployment& d, int64_t batch, int64_t tokens) {
  row.memory_fits = memory_plan(d, batch, tokens).fits;
  if (!row.memory_fits) row.cost_per_token.reset();
  return row;
}

// The ranges `chalk decode` and `chalk prefill` take (--batch, --context, --prompt, --prefix).
void check_range(int64_t v, int64_t lo, int64_t hi, const char* field, const char* unit) {
  if (v < lo || v > hi) {
    throw InputError(field, "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + " " + unit + " (the CLI's range), got " + std::to_string(v));
  }
}

// The same step with mechanisms off (the lower bound); the deployment itself when they are.
template <class F>
Seconds roofline_time(const Deployment& d, Seconds engine, F step) {
  return d.mechanisms.enabled ? step(cli::roofline_of(d)) : engine;
}

py::dict decode_dict(const DecodeStep& r, bool moe) {
  const Keys& k = keys();
  py::dict o;
  put(o, k.batch, py::int_(r.batch));
  put(o, k.context_tokens, py::int_(r.context));
  put(o, k.t_compute_ms, ms(r.t_compute));
  put(o, k.t_weights_ms, ms(r.t_weights));
  put(o, k.t_kv_ms, ms(r.t_kv));
  put(o, k.t_operations_ms, ms(r.t_operations));
  put(o, k.t_comm_ms, ms(r.t_comm));
  put(o, k.t_overhead_ms, ms(r.t_overhead));
  put(o, k.t_host_ms, ms(r.t_host));
  put(o, k.t_launch_ms, ms(r.t_launch));
  put(o, k.graph_batch, py::int_(r.graph_batch));
  put(o, k.t_step_ms, ms(r.t_step));
  put(o, k.bound, py::str(std::string(to_string(r.bound))));
  put(o, k.governs, py::str(r.governs));
  put(o, k.tok_per_s, py::float_(r.tokens_per_s.value()));
  put(o, k.tok_per_s_per_user, py::float_(r.tokens_per_s_per_user.value()));
  put(o, k.tok_per_s_per_chip, py::float_(r.tokens_per_s_per_chip.value()));
  put(o, k.cost_usd_per_mtok, none_or(r.cost_per_token));
  put(o, k.experts_touched_per_layer, moe ? py::object(py::float_(r.experts_touched)) : py::object(py::none()));
  put(o, k.experts_on_busiest_chip, moe ? py::object(py::float_(r.experts_on_busiest_chip)) : py::object(py::none()));
  return o;
}

py::dict decode_row_dict(const DecodeRow& r) {
  const Keys& k = keys();
  py::dict o = decode_dict(r, r.experts_touched > 0);
  const Deployment& d = r.deployment.cast<const Deployment&>();
  const int64_t max_batch = memory_plan(d, 1, r.context).max_batch;  // as decode's max batch column
  put(o, k.t_draft_ms, ms(r.t_draft));
  const MemoryPlan mem = memory_plan(d, r.batch, r.context);
  put(o, k.memory_fits, py::bool_(mem.fits));
  put_one_stage(o, r.batch, r.t_step, mem, false);
  put(o, k.max_batch_at_context, max_batch == INT64_MAX ? py::object(py::none()) : py::object(py::int_(max_batch)));
  put(o, k.t_step_roofline_ms, ms(roofline_time(d, r.t_step, [&](const Deployment& x) { return decode_step(x, r.batch, r.context).t_step; })));
  return o;
}

py::dict prefill_dict(const PrefillStep& r) {
  const Keys& k = keys();
  py::dict o;
  put(o, k.batch, py::int_(r.batch));
  put(o, k.prompt_tokens, py::int_(r.prompt));
  put(o, k.prefix_tokens, py::int_(r.prefix));
  put(o, k.t_compute_ms, ms(r.t_compute));
  put(o, k.t_weights_ms, ms(r.t_weights));
  put(o, k.t_kv_ms, ms(r.t_kv));
  put(o, k.t_operations_ms, ms(r.t_operations));
  put(o, k.t_comm_ms, ms(r.t_comm));
  put(o, k.t_overhead_ms, ms(r.t_overhead));
  put(o, k.t_host_ms, ms(r.t_host));
  put(o, k.t_launch_ms, ms(r.t_launch));
  put(o, k.graph_batch, py::int_(r.graph_batch));
  put(o, k.ttft_ms, ms(r.ttft));
  put(o, k.bound, py::str(std::string(to_string(r.bound))));
  put(o, k.governs, py::str(r.governs));
  put(o, k.tok_per_s, py::float_(r.tokens_per_s.value()));
  put(o, k.cost_usd_per_mtok, none_or(r.cost_per_token));
  return o;
}

py::dict prefill_row_dict(const PrefillRow& r) {
  const Keys& k = keys();
  py::dict o = prefill_dict(r);
  const Deployment& d = r.deployment.cast<const Deployment&>();
  put(o, k.ttft_roofline_ms, ms(roofline_time(d, r.ttft, [&](const Deployment& x) { return prefill_step(x, r.batch, r.prompt, r.prefix).ttft; })));
  const MemoryPlan mem = memory_plan(d, r.batch, r.prompt + r.prefix);
  put(o, k.memory_fits, py::bool_(mem.fits));
  put_one_stage(o, r.batch, r.t_step, mem, true);
  return o;
}

}  // namespace

PYBIND11_MODULE(_chalk, m) {
  m.doc() = "chalk's C++ core: the in-process command line, deployments, decode and prefill steps, the roofline sweep.";

  // One exception type, chalk.ChalkError(message, field), defined in Python (chalk/_error.py).
  // Held for the life of the process (released: never decref'd after the interpreter ends).
  static py::handle chalk_error = py::object(py::module_::import("chalk._error").attr("ChalkError")).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      py::object exc = py::reinterpret_borrow<py::object>(chalk_error)(e.what(), e.field());
      PyErr_SetObject(chalk_error.ptr(), exc.ptr());
    }
  });

  m.def("run_cli", &python::run_cli, py::arg("args"), python::doc::run_cli);

  m.def("cli_commands", [] {
    py::list out;
    for (const auto& c : python::cli_commands()) {
      py::list opts;
      for (const auto& o : c.options) {
        py::dict d;
        d["name"] = o.name;
        d["description"] = o.description;
        d["default"] = o.default_str;
        d["flag"] = o.flag;
        d["positional"] = o.positional;
        d["repeated"] = o.repeated;
        d["short"] = o.shorts;
        opts.append(d);
      }
      py::dict d;
      d["path"] = c.path;
      d["description"] = c.description;
      d["options"] = opts;
      out.append(d);
    }
    return out;
  }, "Every leaf command of the CLI with its options (name, description, default, flag, positional, repeated, short: its one-letter names).");

  py::class_<DecodeRow>(m, "DecodeStep", python::doc::DecodeStep)
      .def_property_readonly("batch", [](const DecodeRow& r) { return r.batch; })
      .def_property_readonly("context_tokens", [](const DecodeRow& r) { return r.context; })
      .def_property_readonly("t_compute_ms", [](const DecodeRow& r) { return to_ms(r.t_compute); })
      .def_property_readonly("t_weights_ms", [](const DecodeRow& r) { return to_ms(r.t_weights); })
      .def_property_readonly("t_kv_ms", [](const DecodeRow& r) { return to_ms(r.t_kv); })
      .def_property_readonly("t_operations_ms", [](const DecodeRow& r) { return to_ms(r.t_operations); })
      .def_property_readonly("t_comm_ms", [](const DecodeRow& r) { return to_ms(r.t_comm); })
      .def_property_readonly("t_overhead_ms", [](const DecodeRow& r) { return to_ms(r.t_overhead); })
      .def_property_readonly("t_host_ms", [](const DecodeRow& r) { return to_ms(r.t_host); })
      .def_property_readonly("t_launch_ms", [](const DecodeRow& r) { return to_ms(r.t_launch); })
      .def_property_readonly("graph_batch", [](const DecodeRow& r) { return r.graph_batch; })
      .def_property_readonly("t_step_ms", [](const DecodeRow& r) { return to_ms(r.t_step); })
      .def_property_readonly("bound", [](const DecodeRow& r) { return std::string(to_string(r.bound)); })
      .def_property_readonly("governs", [](const DecodeRow& r) { return r.governs; })
      .def_property_readonly("tok_per_s", [](const DecodeRow& r) { return r.tokens_per_s.value(); })
      .def_property_readonly("tok_per_s_per_user", [](const DecodeRow& r) { return r.tokens_per_s_per_user.value(); })
      .def_property_readonly("tok_per_s_per_chip", [](const DecodeRow& r) { return r.tokens_per_s_per_chip.value(); })
      .def_property_readonly("cost_usd_per_mtok", [](const DecodeRow& r) { return none_or(r.cost_per_token); })
      .def_property_readonly("experts_touched_per_layer", [](const DecodeRow& r) { return r.experts_touched; })
      .def_property_readonly("experts_on_busiest_chip", [](const DecodeRow& r) { return r.experts_on_busiest_chip; })
      .def_property_readonly("memory_fits", [](const DecodeRow& r) { return r.memory_fits; },
                             "Whether the replica's HBM holds the batch's KV cache beside the weights (memory_plan); False: cost_usd_per_mtok is None")
      .def("to_dict", &decode_row_dict,
           "The step as a dict with the keys of `chalk decode --json`'s steps, memory_fits, max_batch_at_context and "
           "t_step_roofline_ms included (experts null for a dense model).")
      .def("__repr__", [](const DecodeRow& r) {
        return "DecodeStep(batch=" + std::to_string(r.batch) + ", context_tokens=" + std::to_string(r.context) +
               ", t_step_ms=" + std::to_string(to_ms(r.t_step)) + ", bound='" + std::string(to_string(r.bound)) +
               "', memory_fits=" + (r.memory_fits ? "True" : "False") + ")";
      });

  py::class_<PrefillRow>(m, "PrefillStep", python::doc::PrefillStep)
      .def_property_readonly("ttft_ms", [](const PrefillRow& r) { return to_ms(r.ttft); })
      .def_property_readonly("t_step_ms", [](const PrefillRow& r) { return to_ms(r.t_step); })
      .def_property_readonly("tok_per_s", [](const PrefillRow& r) { return r.tokens_per_s.value(); })
      .def_property_readonly("bound", [](const PrefillRow& r) { return std::string(to_string(r.bound)); })
      .def_property_readonly("memory_fits", [](const PrefillRow& r) { return r.memory_fits; },
                             "Whether the replica's HBM holds the prompts' KV cache beside the weights (memory_plan)")
      .def("__repr__", [](const PrefillRow& r) {
        return "PrefillStep(ttft_ms=" + std::to_string(to_ms(r.ttft)) + ", bound='" + std::string(to_string(r.bound)) +
               "', memory_fits=" + (r.memory_fits ? "True" : "False") + ")";
      })
      .def("to_dict", &prefill_row_dict,
           "The chunk as a dict with the keys of `chalk prefill --json`'s prefills, memory_fits and ttft_roofline_ms included.");

  py::class_<Deployment>(m, "Deployment", python::doc::Deployment)
      .def_property_readonly("model", [](const Deployment& d) { return d.model.name; })
      .def_property_readonly("hardware", [](const Deployment& d) { return d.system.name; })
      .def_property_readonly("chips", [](const Deployment& d) { return d.n_chips; })
      .def_property_readonly("view", [](const Deployment& d) { return std::string(cli::view_name(d)); })
      .def("decode_step", [](py::object self, int64_t batch, int64_t context) {
        check_range(batch, 1, kMaxStepBatch, "batch", "sequences");  // the Python argument, not the flag
        check_range(context, 1, kMaxContextTokens, "context", "tokens");
        const Deployment& d = self.cast<const Deployment&>();
        return priced_if_fits(DecodeRow{{decode_step(d, batch, context)}, self}, d, batch, context);
      }, py::arg("batch"), py::arg("context") = 4096, python::doc::decode_step)
      .def("prefill_step", [](py::object self, int64_t prompt, int64_t batch, int64_t prefix) {
        check_range(prompt, 1, kMaxContextTokens, "prompt", "tokens");
        check_range(batch, 1, kMaxStepBatch, "batch", "prompts");
        check_range(prefix, 0, kMaxContextTokens, "prefix", "tokens");
        const Deployment& d = self.cast<const Deployment&>();
        return priced_if_fits(PrefillRow{{prefill_step(d, batch, prompt, prefix)}, self}, d, batch, prompt + prefix);
      }, py::arg("prompt"), py::arg("batch") = 1, py::arg("prefix") = 0, python::doc::prefill_step)
      .def("memory_plan", [](const Deployment& d, int64_t batch, int64_t context) {
        const MemoryPlan p = memory_plan(d, batch, context);
        py::dict o;
        o["hbm_total_gb"] = to_gb(p.hbm_total);
        o["weights_gb"] = to_gb(p.weights);
        o["kv_cache_gb"] = to_gb(p.kv_cache);
        o["reserve_gb"] = to_gb(p.reserve);
        o["free_gb"] = to_gb(p.free);
        o["memory_fits"] = p.fits;
        o["weights_fit"] = p.weights_fit;
        o["max_batch_at_context"] = p.max_batch == INT64_MAX ? py::object(py::none()) : py::object(py::int_(p.max_batch));
        return o;
      }, py::arg("batch"), py::arg("context"), python::doc::memory_plan)
      .def("describe", [](const Deployment& d) { return json_loads(cli::describe_json(d).dump()); }, python::doc::describe_json)
      .def("roofline_sweep", [](const Deployment& d, py::dict cols, std::optional<py::dict> into) {
        const auto batch = column<int64_t>(cols["batch"], py::len(cols["batch"]), "batch");
        const std::size_t n = static_cast<std::size_t>(batch.shape(0));
        const auto context = column<int64_t>(cols["context_tokens"], n, "context_tokens");
        auto opt = [&](const char* k) -> std::optional<py::array_t<double>> {
          if (!cols.contains(k) || cols[k].is_none()) return std::nullopt;
          return column<double>(cols[k], n, k);
        };
        const auto peak = opt("compute_tflop_per_s"), cap = opt("hbm_gb_per_chip"), bw = opt("hbm_tb_per_s_per_chip"), price = opt("price_usd_per_chip_hour");
        py::dict o;
        if (into) {
          o = *into;
        } else {
          for (const char* c : {"t_compute_ms", "t_weights_ms", "t_kv_ms", "t_step_ms", "tok_per_s", "tok_per_s_per_user", "tok_per_s_per_chip", "cost_usd_per_mtok"}) {
            o[c] = py::array_t<double>(n);
          }
          o["bound_code"] = py::array_t<int8_t>(n);
          o["memory_fits"] = py::array_t<bool>(n);
          o["max_batch_at_context"] = py::array_t<int64_t>(n);
        }
        python::SweepInputs in{batch.data(), context.data(), peak ? peak->data() : nullptr, cap ? cap->data() : nullptr,
                               bw ? bw->data() : nullptr, price ? price->data() : nullptr};
        python::SweepOutputs out{out_column<double>(o, "t_compute_ms", n), out_column<double>(o, "t_weights_ms", n),
                                 out_column<double>(o, "t_kv_ms", n), out_column<double>(o, "t_step_ms", n),
                                 out_column<double>(o, "tok_per_s", n), out_column<double>(o, "tok_per_s_per_user", n),
                                 out_column<double>(o, "tok_per_s_per_chip", n), out_column<double>(o, "cost_usd_per_mtok", n),
                                 out_column<int8_t>(o, "bound_code", n), out_column<bool>(o, "memory_fits", n),
                                 out_column<int64_t>(o, "max_batch_at_context", n)};
        {
          py::gil_scoped_release release;
          python::roofline_sweep(d, n, in, out);
        }
        return o;
      }, py::arg("columns"), py::arg("out") = py::none(), python::doc::roofline_sweep);

  m.def("roofline_product_sweep", [](py::list deployments, py::list group_axes, py::dict columns, int64_t start, int64_t stop, py::dict out) {
    if (start < 0 || stop < start) throw InputError("rows", "must be 0 <= start <= stop, got " + std::to_string(start) + ", " + std::to_string(stop));
    python::ProductSweepInputs in;
    for (py::handle h : deployments) in.bases.push_back(&h.cast<const Deployment&>());
    for (py::handle h : group_axes) {
      const auto a = h.cast<std::pair<int64_t, int64_t>>();
      in.group_axes.push_back({a.first, a.second});
    }
    std::vector<py::object> keep;  // the value arrays, alive while C++ reads them
    auto take = [&](const char* name, python::ProductColumn& c, bool ints) {  // columns[name] = (values, stride)
      if (!columns.contains(name)) return;
      const auto t = columns[name].cast<py::tuple>();
      const std::size_t size = py::len(t[0]);
      if (ints) {
        auto a = column<int64_t>(t[0], size, name);
        c.ints = a.data();
        keep.push_back(a);
      } else {
        auto a = column<double>(t[0], size, name);
        c.values = a.data();
        keep.push_back(a);
      }
      c.axis = {static_cast<int64_t>(size), t[1].cast<int64_t>()};
    };
    take("batch", in.batch, true);
    take("context_tokens", in.context_tokens, true);
    take("compute_tflop_per_s", in.compute_tflop_per_s, false);
    take("hbm_gb_per_chip", in.hbm_gb_per_chip, false);
    take("hbm_tb_per_s_per_chip", in.hbm_tb_per_s_per_chip, false);
    take("price_usd_per_chip_hour", in.price_usd_per_chip_hour, false);
    const auto n = static_cast<std::size_t>(stop - start);
    python::SweepOutputs o{out_column<double>(out, "t_compute_ms", n), out_column<double>(out, "t_weights_ms", n),
                           out_column<double>(out, "t_kv_ms", n), out_column<double>(out, "t_step_ms", n),
                           out_column<double>(out, "tok_per_s", n), out_column<double>(out, "tok_per_s_per_user", n),
                           out_column<double>(out, "tok_per_s_per_chip", n), out_column<double>(out, "cost_usd_per_mtok", n),
                           out_column<int8_t>(out, "bound_code", n), out_column<bool>(out, "memory_fits", n),
                           out_column<int64_t>(out, "max_batch_at_context", n)};
    {
      py::gil_scoped_release release;
      python::roofline_product_sweep(in, start, stop, o);
    }
    return out;
  }, py::arg("deployments"), py::arg("group_axes"), py::arg("columns"), py::arg("start"), py::arg("stop"), py::arg("out"),
     python::doc::roofline_product_sweep);

  m.def("deployment",
        [](const std::string& model, const std::string& hardware, int64_t chips, const std::string& weights, const std::string& kv_dtype,
           const std::string& compute, std::optional<double> matmul_efficiency, std::optional<double> hbm_efficiency,
           std::optional<double> price_usd_per_chip_hour, double memory_reserve, bool roofline, std::optional<int64_t> tp,
           std::optional<int64_t> ep, bool two_batch_overlap, std::optional<std::string> dispatch_dtype, int64_t context) {
          cli::DeploymentArgs a;
          a.model = model;
          a.hardware = hardware;
          a.chips = chips;
          a.weights = weights;
          a.kv = kv_dtype;
          a.compute = compute;
          a.matmul_efficiency = matmul_efficiency;
          a.hbm_efficiency = hbm_efficiency;
          a.price_usd_per_chip_hour = price_usd_per_chip_hour;
          a.memory_reserve = memory_reserve;
          a.roofline = roofline;
          a.tp = tp;
          a.ep = ep;
          a.two_batch_overlap = two_batch_overlap;
          a.dispatch_dtype = dispatch_dtype;
          // A deployment object is for sweeps and study: its rows carry memory_fits, so stated
          // chips that cannot hold the weights are kept (the CLI refuses them without
          // --allow-infeasible; chalk.decode(...) does the same).
          a.allow_infeasible = true;
          // As `chalk decode` resolves its flags (python/README.md): the smallest replica when
          // no chips are given, not the cheapest the pricing commands take (issue 30).
          a.replica_rule = cli::ReplicaRule::smallest;
          return cli::resolve(a, context);
        },
        py::arg("model"), py::arg("hardware"), py::arg("chips") = 0, py::arg("weights") = "", py::arg("kv_dtype") = "bf16",
        py::arg("compute") = "", py::arg("matmul_efficiency") = py::none(), py::arg("hbm_efficiency") = py::none(),
        py::arg("price_usd_per_chip_hour") = py::none(), py::arg("memory_reserve") = 0.10, py::arg("roofline") = false,
        py::arg("tp") = py::none(), py::arg("ep") = py::none(), py::arg("two_batch_overlap") = false,
        py::arg("dispatch_dtype") = py::none(), py::arg("context") = 4096, python::doc::resolve);
}
