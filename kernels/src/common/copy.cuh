// copy.cuh — moving tiles between HBM (global memory) and SRAM (shared memory).
//
// SRAM tiles are row-major with a pitch of COLS + 8 elements: the 16 extra bytes per row put the
// 8 rows an ldmatrix reads into 8 different bank groups (no bank conflicts), and keep every row
// 16-byte aligned for cp.async. Loads move whole 16-byte chunks of valid rows only; rows past the
// end of a ragged tile are zero-filled in SRAM, never read from HBM, so the bytes a kernel moves
// are exactly the bytes of its tiles (what the simulator counts, and what Nsight Compute sees).
#pragma once

#include <cstdint>

#include "common/mma.cuh"

namespace flashlab::gpu {

/// Row pitch (elements) of an SRAM tile with `cols` columns.
template <int kCols> inline constexpr int kPitch = kCols + 8;

__device__ __forceinline__ void cp_async_16(void* sram, const void* hbm) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(sram)), "l"(hbm));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
/// Waits until at most N committed groups of this thread are still in flight.
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/// Starts copying rows [0, rows) and columns [0, cols) of an HBM tile (row stride `ld` elements)
/// into the SRAM tile `sram` (kRows x kCols, pitch kPitch<kCols>) with cp.async; the rest of the
/// SRAM tile is set to 0. `cols` is rounded up to whole 16-byte chunks (8 elements): callers
/// guarantee that the HBM row holds them (standard attention pads S and P rows to 16 elements).
/// Every thread of the block must call it; completion: cp_async_commit + cp_async_wait.
template <class T, int kRows, int kCols, int kThreads>
__device__ __forceinline__ void load_tile_async(T* sram, const T* hbm, std::int64_t ld, int rows, int cols) {
  constexpr int kChunks = kCols / 8;  // 16-byte chunks per SRAM row
  constexpr int kPasses = (kRows * kChunks + kThreads - 1) / kThreads;
  const int valid_chunks = (cols + 7) / 8;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    const int c = pass * kThreads + int(threadIdx.x);
    if (c >= kRows * kChunks) break;
    const int r = c / kChunks, col = (c % kChunks) * 8;
    T* dst = sram + r * kPitch<kCols> + col;
    if (r < rows && col / 8 < valid_chunks)
      cp_async_16(dst, hbm + r * ld + col);
    else
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
  }
}

/// Stores rows [0, rows) and columns [0, round_up(cols, 8)) of an SRAM tile to HBM in 16-byte
/// chunks (consecutive threads write consecutive chunks of a row: whole sectors).
template <class T, int kRows, int kCols, int kThreads>
__device__ __forceinline__ void store_tile(T* hbm, std::int64_t ld, const T* sram, int rows, int cols) {
  constexpr int kChunks = kCols / 8;
  constexpr int kPasses = (kRows * kChunks + kThreads - 1) / kThreads;
  const int valid_chunks = (cols + 7) / 8;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    const int c = pass * kThreads + int(threadIdx.x);
    if (c >= kRows * kChunks) break;
    const int r = c / kChunks, col = (c % kChunks) * 8;
    if (r < rows && col / 8 < valid_chunks)
      *reinterpret_cast<uint4*>(hbm + r * ld + col) = *reinterpret_cast<const uint4*>(sram + r * kPitch<kCols> + col);
  }
}

}  // namespace flashlab::gpu
