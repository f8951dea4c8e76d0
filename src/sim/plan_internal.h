// Private to plan.cc and plan_sizes.cc: the replica shapes a plan tries on one system
// (docs/simulator.md, "Planning").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chalk/sim/plan.h"

namespace chalk::sim::plan_detail {

/// One replica shape: chips and a parallel layout.
struct Shape {
  Deployment dep;
  std::string name;
};

/// The replica sizes a plan tries on `s` within `budget` chips: PlanOptions::replica_chips
/// when stated, else the divisors of the scale-up domain and 2, 4, ... whole domains from
/// the smallest replica that holds the model and one sequence of `context` tokens; with the
/// engine step, only sizes an engine runs (replica_size_problem; each one dropped adds a
/// line to `warnings`). Throws InputError ("chips", "replica_chips") as plan_deployment.
struct ReplicaSizes {
  std::vector<int64_t> sizes;
  bool stated = false;
};
ReplicaSizes replica_sizes(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, const PlanOptions& o, int64_t budget,
                           int64_t context, std::vector<std::string>& warnings);

/// Every fitting layout of one replica of each size in `sizes` up to `budget` chips (the
/// plain roofline: one layout per size, even sharding).
std::vector<Shape> shapes_within(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, const std::vector<int64_t>& sizes,
                                 int64_t budget, int64_t context);

}  // namespace chalk::sim::plan_detail
