// Fuzzes the chalk-hardware/1 reader; an accepted system's derived figures are finite.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chalk/base/error.h"
#include "chalk/hardware/hardware.h"
#include "chalk/io/io.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  chalk::SystemSpec s;
  try {
    s = chalk::system_from_json(text, "fuzz.json");
  } catch (const chalk::InputError&) {
    return 0;
  }
  using chalk::fuzz::finite_nonneg;
  for (auto p : {chalk::MatmulPrecision::bf16, chalk::MatmulPrecision::fp8, chalk::MatmulPrecision::int8, chalk::MatmulPrecision::fp4}) {
    CHALK_FUZZ_CHECK(finite_nonneg(chalk::flops_per_byte(s.chip, p).value()));
  }
  CHALK_FUZZ_CHECK(finite_nonneg(chalk::hbm_sweep_time(s.chip.hbm_capacity, s.chip.hbm_bandwidth).value()));
  // A whole deployment at the chip cap stays finite.
  CHALK_FUZZ_CHECK(std::isfinite(s.chip.hbm_capacity.value() * static_cast<double>(chalk::max_chips)));
  for (const auto& t : s.host_tiers) CHALK_FUZZ_CHECK(finite_nonneg(chalk::hbm_sweep_time(t.capacity_per_chip, t.bandwidth_per_chip).value()));
  return 0;
}
