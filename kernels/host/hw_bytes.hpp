// hw_bytes.hpp — why the kernels' global-memory bytes (the simulator's sector level, counted by
// flashlab/executor/sector_counter.hpp as Nsight Compute counts them: whole 32-byte sectors per
// warp request) differ from the simulator's request level (the papers' HBM bytes), per tensor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/event.hpp"
#include "flashlab/executor/counters.hpp"

namespace flashlab::gpu {

/// One tensor and direction where the two levels differ, with why.
struct ByteDifference {
  Tensor tensor = Tensor::Q;
  bool write = false;
  std::uint64_t sim = 0, kernel = 0;
  std::string reason;
};
/// Every tensor/direction where the kernels' bytes (`kernel`: Counters::levels[sector]) differ
/// from the simulator's `sim` (Counters::levels[hbm]), with why.
std::vector<ByteDifference> explain_differences(const Problem& p, const TensorBytes& sim, const TensorBytes& kernel);

}  // namespace flashlab::gpu
