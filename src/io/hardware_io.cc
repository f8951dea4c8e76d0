// chalk's hardware format (docs/file-formats.md, "chalk-hardware/1").
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/io/json_util.h"

namespace chalk {

SystemSpec system_from_json(std::string_view text, const std::string& where) {
  using detail::Obj;
  const auto j = detail::parse_json(text, where);
  const Obj c(j, where + ": ");
  c.only({"format", "name", "description", "source", "date", "chip", "efficiency", "scale_up", "scale_out", "price",
          "host_tiers", "notes", "status", "power", "year", "year_source", "host", "op_floor"});
  const std::string format = c.string("format");
  if (format != "chalk-hardware/1") throw InputError(c.field("format"), "unknown format '" + format + "'; expected chalk-hardware/1");
  SystemSpec s;
  s.name = c.string("name");
  s.description = c.string("description");
  s.source = c.string("source");
  s.date = c.string("date");
  if (auto status = c.opt_string("status")) s.status = parse_system_status(*status, c.field("status"));
  if (auto year = c.opt_integer("year")) {
    if (*year < 1990 || *year > 2100) throw InputError(c.field("year"), "must be a calendar year in 1990..2100, got " + std::to_string(*year));
    s.year = static_cast<int>(*year);
    s.year_source = c.string("year_source");
  }

  const Obj chip = c.object("chip");
  chip.only({"name", "peak_tflop_per_s", "hbm_gb", "hbm_tb_per_s", "memory_type", "sm_count", "sm_count_source", "source"});
  if (chip.has("sm_count")) {
    s.chip.sm_count = chip.integer_in("sm_count", 1, hardware_limits::sm_count_max);
    s.chip.sm_count_source = chip.string("sm_count_source");
  }
  s.chip.name = chip.string("name");
  if (auto type = chip.opt_string("memory_type")) {
    if (*type != "HBM" && *type != "GDDR6" && *type != "GDDR7" && *type != "LPDDR5X") {
      throw InputError(chip.field("memory_type"), "expected HBM, GDDR6, GDDR7 or LPDDR5X, got '" + *type + "'");
    }
    s.chip.memory_type = *type;
  }
  s.chip_source = chip.opt_string("source").value_or("");
  const Obj peak = chip.object("peak_tflop_per_s");
  peak.only({"bf16", "fp8", "int8", "fp4"});
  for (const char* key : {"bf16", "fp8", "int8", "fp4"}) {
    if (auto v = peak.opt_number(key)) {
      if (!(*v > 0)) throw InputError(peak.field(key), "must be positive, got " + detail::describe(peak.raw(key)));
      s.chip.peak[static_cast<int>(parse_matmul_precision(key, peak.field(key)))] = teraflops_per_second(*v);
    }
  }
  s.chip.hbm_capacity = gigabytes(chip.number("hbm_gb"));
  s.chip.hbm_bandwidth = terabytes_per_second(chip.number("hbm_tb_per_s"));

  const Obj eff = c.object("efficiency");
  eff.only({"matmul", "hbm", "matmul_source", "hbm_source", "sustained_clock", "sustained_clock_source"});
  const Obj mm = eff.object("matmul");
  mm.only({"bf16", "fp8", "int8", "fp4"});
  for (const char* key : {"bf16", "fp8", "int8", "fp4"}) {
    if (auto v = mm.opt_number(key)) {
      if (!(*v > 0 && *v <= 1)) throw InputError(mm.field(key), "must be a fraction in (0, 1], got " + detail::describe(mm.raw(key)));
      s.efficiency.matmul[static_cast<int>(parse_matmul_precision(key, mm.field(key)))] = *v;
    }
  }
  s.efficiency.hbm = eff.number("hbm");
  s.efficiency.matmul_source = eff.string("matmul_source");
  s.efficiency.hbm_source = eff.string("hbm_source");
  if (auto clock = eff.opt_number("sustained_clock")) {
    if (!(*clock > 0 && *clock <= 1)) {
      throw InputError(eff.field("sustained_clock"), "must be a fraction in (0, 1] of the clock the matmul fractions were measured at, got " +
                                                         detail::describe(eff.raw("sustained_clock")));
    }
    s.efficiency.sustained_clock = *clock;
    s.efficiency.sustained_clock_source = eff.string("sustained_clock_source");
  }

  const Obj up = c.object("scale_up");
  up.only({"name", "domain_chips", "gb_per_s_per_direction", "topology", "torus_dims", "source", "collective_efficiency",
           "collective_efficiency_source", "collective_latency_s", "collective_latency_source",
           "small_all_reduce_s", "small_all_reduce_source"});
  s.scale_up_domain = up.integer_in("domain_chips", 1, max_chips);
  s.scale_up_bandwidth_per_direction = gigabytes_per_second(up.number("gb_per_s_per_direction"));
  if (auto topo = up.opt_string("topology")) s.scale_up_topology = parse_scale_up_topology(*topo, up.field("topology"));
  if (up.has("torus_dims")) {
    const auto& dims = up.raw("torus_dims");
    if (!dims.is_array()) throw InputError(up.field("torus_dims"), "expected a list of integers");
    for (const auto& d : dims) {
      if (!d.is_number_integer()) throw InputError(up.field("torus_dims"), "expected a list of integers, got " + d.dump());
      s.scale_up_torus_dims.push_back(d.get<int64_t>());
    }
  }
  // The collective library's measured large-message line (docs/formulas.md "Collective rate
  // per system"); each with its source. validate() checks the ranges after conversion.
  if (auto eff = up.opt_number("collective_efficiency")) {
    if (!(*eff > 0 && *eff <= 1)) {
      throw InputError(up.field("collective_efficiency"), "must be a fraction in (0, 1] of gb_per_s_per_direction, got " +
                                                              detail::describe(up.raw("collective_efficiency")));
    }
    s.collective_efficiency = *eff;
    s.collective_efficiency_source = up.string("collective_efficiency_source");
  }
  if (auto lat = up.opt_number("collective_latency_s")) {
    s.collective_latency = Seconds(*lat);
    s.collective_latency_source = up.string("collective_latency_source");
  }
  if (auto small = up.opt_number("small_all_reduce_s")) {  // docs/formulas.md "Small-message all-reduce floor"
    s.small_all_reduce = Seconds(*small);
    s.small_all_reduce_source = up.string("small_all_reduce_source");
  }
  s.scale_up_source = up.opt_string("source").value_or("");
  s.scale_up_name = up.opt_string("name").value_or("");
  if (auto out = c.opt_object("scale_out")) {
    out->only({"name", "gb_per_s_per_direction", "source"});
    s.scale_out_bandwidth_per_direction = gigabytes_per_second(out->number("gb_per_s_per_direction"));
    s.scale_out_source = out->opt_string("source").value_or("");
  }
  if (auto price = c.opt_object("price")) {
    price->only({"usd_per_chip_hour", "source"});
    s.price_per_chip = usd_per_hour(price->number("usd_per_chip_hour"));
    s.price_source = price->string("source");
  }
  if (auto host = c.opt_object("host")) {
    host->only({"chips", "source"});
    s.host_chips = host->integer_in("chips", 1, s.scale_up_domain);
    s.host_chips_source = host->string("source");
  }
  if (auto power = c.opt_object("power")) {
    power->only({"watts_per_chip", "source"});
    s.power_w_per_chip = power->number("watts_per_chip");
    s.power_source = power->string("source");
  }
  if (auto fl = c.opt_object("op_floor")) {
    fl->only({"us", "kind", "source"});
    s.op_floor = microseconds(fl->number("us"));
    s.op_floor_kind = fl->string("kind");
    s.op_floor_source = fl->string("source");
  }
  if (c.has("host_tiers")) {
    const auto& tiers = c.raw("host_tiers");
    if (!tiers.is_array()) throw InputError(c.field("host_tiers"), "expected a list");
    for (size_t i = 0; i < tiers.size(); ++i) {
      const Obj t(tiers[i], c.field("host_tiers") + "[" + std::to_string(i) + "].");
      t.only({"name", "gb_per_chip", "gb_per_s_per_chip", "source", "link_gb_per_s_per_chip", "link_source"});
      MemoryTier tier{t.string("name"), gigabytes(t.number("gb_per_chip")), gigabytes_per_second(t.number("gb_per_s_per_chip")),
                      t.string("source"), {}, {}};
      if (t.has("link_gb_per_s_per_chip")) {
        tier.link_per_chip = gigabytes_per_second(t.number("link_gb_per_s_per_chip"));
        tier.link_source = t.string("link_source");
      }
      s.host_tiers.push_back(tier);
    }
  }
  validate(s, where);  // every number, once, after unit conversion (finite, within hardware_limits)
  return s;
}

}  // namespace chalk
