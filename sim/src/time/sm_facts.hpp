// sm_facts.hpp — facts of an SM that the time model's rules share (private to sim/src/time): the
// warp schedulers each issuing one warp-instruction per cycle, and a warp-instruction's lanes (NVIDIA
// CUDA C++ Programming Guide, "Compute Capabilities": 4 schedulers per SM on compute capability 8.x and
// 9.0, 32 threads per warp).
#pragma once

namespace flashlab::time_detail {

inline constexpr double kSchedulers = 4;  // warp schedulers (sub-partitions) per SM
inline constexpr double kLanes = 32;      // lanes of one warp-instruction
// wgmma's FLOP per cycle per SM (Hopper, m64nNk16, fp16 / bf16 in, fp32 accumulate): the clock the SM
// keeps under wgmma's load is GpuSpec::wgmma_flops / (this x SMs)
inline constexpr double kWgmmaFlopPerCycle = 4096;
// K of one wgmma (fp16 / bf16 in: m64nNk16, PTX ISA "wgmma.mma_async"): a GEMM over K issues K / 16
inline constexpr double kWgmmaK = 16;

}  // namespace flashlab::time_detail
