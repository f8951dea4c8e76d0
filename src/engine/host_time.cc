// Host work per step of the serving engines (host_time.h).
#include "chalk/engine/host_time.h"

namespace chalk {

HostTime engine_host_time(std::string_view engine) {
  const std::string_view family = engine.substr(0, engine.find('-'));
  HostTime h;
  if (family == "vllm" || family == "sglang") {
    h.s_per_sequence = kVllmHostSPerSequence;
    h.source = "host 21.5 us per sequence per step (vLLM issue #10634: 5.5 ms at batch 256), overlapped with the GPU step";
  } else if (family == "trtllm") {
    h.s_per_sequence = kTrtllmHostSPerSequence;
    h.source = "host 29.4 us per sequence per step (TensorRT-LLM PR #10273: 45.11 ms at 1,536 sequences), overlapped with the GPU step";
  } else {
    h.source = "no host time per step";
  }
  return h;
}

}  // namespace chalk
