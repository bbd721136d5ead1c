// algo.hpp — the algorithm names shared by the simulator and the CUDA kernels (host + device).
#pragma once

#include <cstdint>

namespace flashlab {

/// The three forward algorithms: standard attention (FA1 paper, Algorithm 0), FlashAttention V1
/// (FA1 paper, Algorithm 1) and FlashAttention V2 (FA2 paper, Algorithm 1).
enum class Algo : std::uint8_t { standard = 0, v1 = 1, v2 = 2 };

}  // namespace flashlab
