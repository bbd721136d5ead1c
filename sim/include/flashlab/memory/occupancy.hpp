// occupancy.hpp — how many thread blocks of a launch an SM holds at once, from shared memory,
// registers and threads (the CUDA occupancy rules), and how the grid fills the GPU. One rule
// (launch_occupancy), read by count's grid line (executor counters), the L2 model (which blocks
// are resident together) and the time model (waves, SM idle time).
#pragma once

#include <cstdint>
#include <string_view>

#include "flashlab/config/config.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// Resident thread blocks per SM and what limits them.
struct Occupancy {
  std::int64_t blocks_per_sm = 0;         // resident blocks of this launch per SM (>= 1)
  std::string_view limit;                 // "shared memory", "registers", "threads" or "blocks"
  std::int64_t smem_per_block = 0;        // bytes: the launch's SRAM peak + 1 KiB the driver reserves
  std::int64_t registers_per_thread = 0;  // the compiled kernel's (compiled_registers.hpp), else the rule below
  bool registers_compiled = false;        // from the compiled kernel
  std::int64_t slots = 0;                 // SMs * blocks_per_sm: blocks resident on the GPU at once
};

/// Registers per thread of launch l's kernel: its fp32 accumulators per thread plus 40 for
/// addresses, indices and operand fragments, rounded up to 8 and at most 255. Accumulators
/// (kernels/src/tiles.hpp, the rule that picks the compiled tiles): split-Q, a warp's rows of S_ij
/// (B_r/W x B_c) and of O_i when the launch keeps O in registers (B_r/W x d); split-K, its column
/// slice of S_ij (B_r x B_c/W) and a partial O (B_r x d). A launch without tile loops and without
/// a matmul (standard attention's softmax) has no accumulators.
std::int64_t registers_per_thread(const Problem& p, const Launch& l);

/// Warps of a row launch's thread block (kernels/src/standard.cu fl_standard_softmax: 128 threads).
inline constexpr int kRowWarps = 4;

/// Whether launch l runs one thread block per query row (a q_row grid dimension: standard
/// attention's softmax).
bool row_launch(const Launch& l);

/// The N_q x N_k tensors a row launch loads (S for the softmax; P and dP for the backward's dS).
std::int64_t row_tensors_loaded(const Launch& l);

/// Warps per thread block of launch l: kRowWarps for a row launch, else p.warps.
int launch_warps(const Problem& p, const Launch& l);

/// Occupancy of launch l on p.gpu with SRAM peak `sram_peak` bytes per block: the least of
/// max blocks per SM, max warps / warps, 65,536 registers / (registers per thread * threads, each
/// warp's allocation rounded up to 256) and shared memory per SM / (sram_peak + 1 KiB); at least 1.
Occupancy occupancy(const Problem& p, const Launch& l, std::int64_t sram_peak);

/// The occupancy of launch l as every consumer takes it — count's grid line (executor counters),
/// the L2 model's resident blocks and the time model's slots: a row launch's block holds its rows
/// in SRAM (each loaded row as fp32, N_k rounded up to 8, and one fp32 per warp for the block
/// reductions: standard.cu's softmax_smem) with kRowWarps warps; any other launch's block holds the
/// schedule's tiles (sram_bytes at min(B_r, N_q) x min(B_c, N_k)) with p.warps.
Occupancy launch_occupancy(const Problem& p, const Launch& l);

}  // namespace flashlab
