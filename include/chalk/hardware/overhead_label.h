// The words for the fixed time of each operation of a step, by the kind of chip (review 5:
// `--explain` called a TPU's per-XLA-op floor a "kernel launch floor").
#pragma once

#include <string>

#include "chalk/hardware/hardware.h"

namespace chalk {

/// What T_overhead, the fixed time of each dependent operation of a step, is on `s`, in a few
/// words for explanations: "per-op floor (XLA fused op)" where the system's file states an
/// op_floor (TPUs: one per fused op of the compiled XLA program, its op_floor_kind), else
/// "kernel launch floor" (a GPU kernel's, Calibration::kernel_floor; docs/formulas.md,
/// "Fixed time per operation"). Defined in src/hardware/hardware.cc.
std::string overhead_label(const SystemSpec& s);

}  // namespace chalk
