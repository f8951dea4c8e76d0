// What must hold for every model a reader accepts: the counts are finite and
// non-negative at the model's own context limit, and validate() agrees with the reader.
#pragma once

#include "chalk/base/error.h"
#include "chalk/model/model.h"
#include "fuzz_common.h"

namespace chalk::fuzz {

inline void check_model(const ModelSpec& m) {
  try {
    validate(m, "fuzz");  // a reader must never accept what validate() refuses
  } catch (const InputError&) {
    CHALK_FUZZ_CHECK(false && "reader accepted a model validate() refuses");
  }
  const ParamCounts p = count_params(m);
  CHALK_FUZZ_CHECK(finite_nonneg(p.total()) && p.total() > 0);
  CHALK_FUZZ_CHECK(finite_nonneg(p.active_matmul()));
  CHALK_FUZZ_CHECK(finite_nonneg(weight_bytes(m, m.weights).value()));
  const int64_t n = n_layers(m);
  CHALK_FUZZ_CHECK(n >= 1 && n <= model_limits::layers);
  for (int64_t context : {int64_t{1}, m.max_context}) {
    CHALK_FUZZ_CHECK(finite_nonneg(kv_bytes_per_sequence(m, context, DType::bf16).value()));
    CHALK_FUZZ_CHECK(finite_nonneg(decode_flops_per_token(m, context).value()));
    CHALK_FUZZ_CHECK(finite_nonneg(prefill_flops(m, context, 0).value()));
  }
}

}  // namespace chalk::fuzz
