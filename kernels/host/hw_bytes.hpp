// hw_bytes.hpp — the global-memory bytes the kernels move, counted as Nsight Compute counts them
// (l1tex__t_bytes_pipe_lsu_mem_global_op_{ld,st}: whole 32-byte sectors per warp request), per
// tensor, for comparison with the simulator's HBM bytes (counters.hpp) and with the profiler.
//
// The kernels move every tile in whole 16-byte chunks, 32 consecutive chunks or fp32 rows per
// warp request, from 256-byte aligned allocations. So the model is exact when it knows which rows
// each thread block touches: Q, K, V, O rows (d * e_in bytes, a multiple of 32) are moved as the
// simulator counts them; fp32 statistics (l, m, L) are moved in runs of 32 rows whose first and
// last sectors may be partly used; standard attention's S and P rows are padded to 16 elements
// (api.hpp standard_ld) and its two tiled matmul kernels stream K and V once per Q block.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/event.hpp"

namespace flashlab::gpu {

/// Bytes per tensor and direction: [tensor][0 = read (ld), 1 = write (st)], all batch * heads.
using TensorBytes = std::array<std::array<std::uint64_t, 2>, kTensorCount>;

/// Bytes that a contiguous access of n bytes at byte address a occupies in 32-byte sectors.
std::uint64_t sector_bytes(std::uint64_t a, std::uint64_t n);

/// What the plain build of p.algo's kernels moves (batch * heads included).
TensorBytes kernel_bytes(const Problem& p);

/// One line of the explanation of kernel_bytes - simulator bytes, for one tensor and direction.
struct ByteDifference {
  Tensor tensor = Tensor::Q;
  bool write = false;
  std::uint64_t sim = 0, kernel = 0;
  std::string reason;
};
/// Every tensor/direction where the kernels' bytes differ from the simulator's `sim`, with why.
std::vector<ByteDifference> explain_differences(const Problem& p, const TensorBytes& sim, const TensorBytes& kernel);

std::uint64_t total(const TensorBytes& b, bool write);

}  // namespace flashlab::gpu
