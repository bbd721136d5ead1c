// algo.hpp — the algorithm names shared by the simulator and the CUDA kernels (host + device).
#pragma once

#include <cstdint>

namespace flashlab {

/// The forward algorithms: standard attention (FA1 paper, Algorithm 0), FlashAttention V1 (FA1
/// paper, Algorithm 1), FlashAttention V2 (FA2 paper, Algorithm 1) and FlashAttention-3's Hopper
/// schedule of V2's loop (FA3 paper, arXiv 2407.08608, Algorithm 1: a producer warp loading K/V
/// through a stage ring, consumer warpgroups on asynchronous WGMMA; docs/model.md "V3").
enum class Algo : std::uint8_t { standard = 0, v1 = 1, v2 = 2, v3 = 3 };

}  // namespace flashlab
