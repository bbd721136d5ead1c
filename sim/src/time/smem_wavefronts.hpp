// smem_wavefronts.hpp — the time model's shared-memory unit: a step's shared-memory traffic in
// 128-byte wavefronts (one per cycle per SM), its matmuls' operand reads by each kernel's warp layout,
// tiles staged in SRAM, and the patterns whose bank conflicts or narrow accesses cost more wavefronts
// than their bytes. Private to sim/src/time.
#pragma once

#include "flashlab/config/config.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab::time_detail {

/// The shared-memory wavefronts, in bytes (128 per wavefront), of one row of standard attention's
/// softmax launch (kernels/src/standard.cu fl_standard_softmax, FA paper Algorithm 0 line 2) on its
/// row of N_k elements (rounded up to 8): load_row stores each fp32 element on its own, a warp's 32
/// lanes 32 bytes apart (8 lanes on each bank: 8 wavefronts per 32 elements); exp_row reads and
/// writes it back element by element, conflict-free (2 per 32); store_row reads 8 consecutive
/// elements per lane as two 16-byte loads, lanes 32 bytes apart (2-way: 8 wavefronts per 128
/// elements): 0.375 wavefronts per element, plus 16 a row for the two block reductions (each warp
/// stores its value, then loads the 4 back as one broadcast). Nsight Compute's counts on the H200:
/// tests/data/gpu_time/h200_smem.json (tests/sim/time/smem_wavefronts_test.cpp). 0 for a launch
/// that is not that softmax.
double softmax_row_smem_bytes(const Problem& p, const Launch& l);

/// The shared-memory wavefronts, in bytes, that split-K warps' reductions on an r-row tile cost
/// beyond their bytes (kernels/src/common/row_tile.cuh, FA1 Alg. 1 lines 10-12):
///  - P~_ij V_j (update_chunks): each thread reads W fp32 partials of its 8 columns as two 16-byte
///    loads, the 8 lanes of a row 32 bytes apart and the rows d + 8 floats apart, so a warp's load
///    touches 16 of the 32 banks twice: 2-way, one extra wavefront per ideal one, W r d 4 bytes;
///  - the row statistics (tile_softmax): a warp stores its r partial maxima and sums from one lane
///    in four, 8 rows (32 bytes) per store, a wavefront each (2 W r/8 of them for W r 8 bytes), and
///    every warp reads the W warps' maxima of its r rows 8 rows per load (W^2 r/8 wavefronts for
///    W^2 r 4 bytes): 24 W r + 12 W^2 r bytes more.
/// Nsight Compute's loads and stores on the H200 (tests/data/gpu_time/h200_smem.json), checked by
/// tests/sim/time/smem_wavefronts_test.cpp. 0 for split-Q warps or one warp.
double split_k_reduction_conflict_bytes(const Problem& p, std::int64_t rows);

/// The shared-memory wavefronts, in bytes, of split-Q warps' P~_ij V_j on its way to O_i in the
/// row-update kernels (--order kv-outer with split-Q warps, kernels/src/v1.cu: one partial result,
/// row_tile.cuh partial_pv then update_chunks), which the warp model does not count (it has no
/// reduction): r d 4 bytes stored, read back with the 2-way conflict above (twice that). 0 for
/// any other kernel.
double split_q_row_update_bytes(const Problem& p, std::int64_t rows);

/// Whether launch l walks tiles of the backward (its body computes dK_j += dS_ij^T Q_i).
bool grad_tiles(const Launch& l);

/// The shared-memory wavefronts, in bytes, of step s of launch l (`tiles`: l walks tiles): the warps'
/// matmul operand reads (split-Q warps each read all of K_j and V_j and their rows of Q_i, split-K
/// warps all of Q_i and their columns of K_j, V_j, P; a backward tile by its kernel's warp layout,
/// grad_layout), the patterns above, tiles stored from SRAM (written from the registers, read back:
/// twice their bytes; a load into SRAM is a cp.async fill, not on the pipe: Nsight Compute's
/// wavefronts of it stay flat as the bytes copied grow, tests/data/gpu_time/h200_smem.json), plus
/// `warp_bytes` (the warp model's reductions, step_warp_work); the softmax row's its own rule.
double step_smem_bytes(const Problem& p, const Launch& l, const StepView& s, bool tiles, double warp_bytes);

}  // namespace flashlab::time_detail
