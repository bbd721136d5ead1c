// copy.cuh — moving tiles between HBM (global memory) and SRAM (shared memory).
//
// SRAM tiles are row-major and packed (kRows x kCols elements), with the 16-byte chunks of each
// row permuted by an XOR with the row number (swizzle): the 8 rows that one ldmatrix reads at the
// same logical chunk land in 8 different bank groups, so there are no bank conflicts. Padding the
// rows instead would do that too, but Nsight Compute counts a cp.async by the shared-memory
// sectors it fills: padded 128-byte rows counted 9/8 of the bytes moved (measured on the H200).
// The XOR keeps the two chunks of every 32-byte sector together, so a swizzled row fills exactly
// as many sectors as it reads. Loads move whole 16-byte chunks of valid rows only; rows past the
// end of a ragged tile are zero-filled in SRAM, never read from HBM, so the bytes a kernel moves
// are exactly the bytes of its tiles (what the simulator counts, and what Nsight Compute sees).
#pragma once

#include <cstdint>

#include "common/mma.cuh"

namespace flashlab::gpu {

/// Element offset of (r, c) in an SRAM tile with kCols columns: chunk c/8 of row r is stored at
/// chunk (c/8) XOR f(r), f(r) = r mod 8 for rows of 8 or more chunks; rows of 4 chunks (64 bytes)
/// share a 128-byte line in pairs, so f(r) = (r/2) mod 4. Any row offset that is a multiple of 8
/// keeps the pattern, so sub-tiles starting at such rows are addressed the same way.
template <int kCols>
__device__ __forceinline__ int swizzle(int r, int c) {
  constexpr int kChunks = kCols / 8;                            // 16-byte chunks per row
  constexpr int kRowsPerLine = kChunks >= 8 ? 1 : 8 / kChunks;  // rows sharing 128 bytes
  constexpr int kMask = (kChunks >= 8 ? 8 : kChunks) - 1;
  static_assert(kCols % 32 == 0, "rows of at least 4 chunks");
  const int chunk = c >> 3;
  const int stored = (chunk & ~kMask) | ((chunk ^ (r / kRowsPerLine)) & kMask);
  return r * kCols + stored * 8 + (c & 7);
}

/// A lane's place in a swizzled SRAM tile (swizzle) of kCols 16-bit columns, as a shared-window
/// address, for fragment loads and stores that step by whole 8-row groups and 16-column pairs of
/// chunks. The lane's row rl and chunk parity cl (0 or 1; e: its element within the chunk) are
/// folded in once; then (r0, c0), r0 a multiple of 8 and c0 of 16 (or of 8 where cl = 0), costs
/// one XOR and a constant offset: the swizzle only permutes the chunk bits below the row's bytes,
/// which XOR-ing c0 / 8 into them does, and the row bytes add above them. So the tile must start
/// at a multiple of its row's bytes in the shared window (every backward tile does: GradSram).
template <int kCols>
struct SwizzledAt {
  static constexpr int kRowBytes = kCols * 2;
  std::uint32_t at;
  __device__ __forceinline__ SwizzledAt(const void* tile, int rl, int cl, int e = 0)
      : at(smem_addr(tile) + std::uint32_t(rl * kRowBytes + 2 * (swizzle<kCols>(rl, cl * 8 + e) - rl * kCols))) {}
  __device__ __forceinline__ std::uint32_t operator()(int r0, int c0) const {
    return (at ^ std::uint32_t(c0 / 8 * 16)) + std::uint32_t(r0 * kRowBytes);
  }
  /// The same lane r0 rows further down (r0 a multiple of 8).
  __device__ __forceinline__ SwizzledAt down(int r0) const {
    SwizzledAt s = *this;
    s.at += std::uint32_t(r0 * kRowBytes);
    return s;
  }
};

__device__ __forceinline__ void cp_async_16(void* sram, const void* hbm) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(sram)), "l"(hbm));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
/// Waits until at most N committed groups of this thread are still in flight.
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/// One 8-byte store of two 32-bit words to HBM (st.global.v2.b32). The compiler may split a float2 or
/// uint2 assignment into two 4-byte stores, and Nsight Compute then counts the sector they share
/// twice (seen on the H200: one extra sector per row of split-KV's Oacc, twice O's bytes in the combine).
__device__ __forceinline__ void store_global_v2(void* hbm, std::uint32_t x, std::uint32_t y) {
  asm volatile("st.global.v2.b32 [%0], {%1, %2};\n" ::"l"(hbm), "r"(x), "r"(y) : "memory");
}

/// One 16-byte store of four 32-bit words to HBM (st.global.v4.b32): a chunk of O built element by
/// element in registers was otherwise stored by nvcc in pieces (4x the sectors, seen on the H200).
__device__ __forceinline__ void store_global_v4(void* hbm, const uint4& x) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(hbm), "r"(x.x), "r"(x.y), "r"(x.z), "r"(x.w) : "memory");
}

/// Calls f(r, col) for each 16-byte chunk of a kRows x kCols tile that this thread moves: chunk
/// c = pass * kThreads + threadIdx.x in row-major order is row r = c / (kCols / 8), first column
/// col = (c % (kCols / 8)) * 8, so consecutive threads take consecutive chunks of a row.
template <int kRows, int kCols, int kThreads, class F>
__device__ __forceinline__ void for_each_chunk(F&& f) {
  constexpr int kChunks = kCols / 8;  // 16-byte chunks per row
  constexpr int kPasses = (kRows * kChunks + kThreads - 1) / kThreads;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    const int c = pass * kThreads + int(threadIdx.x);
    if (c >= kRows * kChunks) break;
    f(c / kChunks, (c % kChunks) * 8);
  }
}

/// Starts copying rows [0, rows) and columns [0, cols) of an HBM tile (row stride `ld` elements)
/// into the SRAM tile `sram` (kRows x kCols, swizzled) with cp.async; the rest of the
/// SRAM tile is set to 0. `cols` is rounded up to whole 16-byte chunks (8 elements): callers
/// guarantee that the HBM row holds them (standard attention pads S and P rows to 16 elements).
/// Every thread of the block must call it; completion: cp_async_commit + cp_async_wait.
///
/// When the block's threads cover whole rows in each pass (kThreads a multiple of the chunks per
/// row) and a pass spans a multiple of the swizzle's 8-row period, a thread's chunks are the same
/// column kStep rows apart in HBM and in SRAM: one address pair per thread, and constant offsets
/// for the passes. A whole tile (every row and column valid: all but a ragged last tile) then
/// issues its cp.async with no check at all, as FA2's kernels do for even tiles; the per-chunk
/// checks and branches otherwise cost some 30 instructions per 16-byte chunk, as many as the
/// tensor-core instructions of the tile at d = 128 (seen in the H200's SASS). A ragged tile checks
/// each pass on the same address pair; for_each_chunk's form instead (row and column per chunk)
/// brought the spills back in V2's 128-row tiles (88 bytes at d = 128, ptxas), so it is kept only
/// for the shapes whose threads do not cover whole rows per pass.
template <class T, int kRows, int kCols, int kThreads>
__device__ __forceinline__ void load_tile_async(T* sram, const T* hbm, std::int64_t ld, int rows, int cols) {
  constexpr int kChunks = kCols / 8;  // 16-byte chunks per row
  const int valid_chunks = (cols + 7) / 8;
  if constexpr (kThreads % kChunks == 0 && (kThreads / kChunks) % 8 == 0 && kRows % (kThreads / kChunks) == 0) {
    constexpr int kStep = kThreads / kChunks, kPasses = kRows / kStep;  // rows between a thread's chunks
    const int r0 = int(threadIdx.x) / kChunks, col = (int(threadIdx.x) % kChunks) * 8;
    T* dst = sram + swizzle<kCols>(r0, col);  // swizzle(r0 + p kStep, col) = this + p kStep kCols
    const T* src = hbm + r0 * ld + col;
    if (rows >= kRows && valid_chunks >= kChunks) {
#pragma unroll
      for (int p = 0; p < kPasses; ++p) cp_async_16(dst + p * kStep * kCols, src + p * kStep * ld);
      return;
    }
    const bool col_valid = col / 8 < valid_chunks;
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      if (col_valid && r0 + p * kStep < rows)
        cp_async_16(dst + p * kStep * kCols, src + p * kStep * ld);
      else
        *reinterpret_cast<uint4*>(dst + p * kStep * kCols) = make_uint4(0, 0, 0, 0);
    }
  } else {
    for_each_chunk<kRows, kCols, kThreads>([&](int r, int col) {
      T* dst = sram + swizzle<kCols>(r, col);
      if (r < rows && col / 8 < valid_chunks)
        cp_async_16(dst, hbm + r * ld + col);
      else
        *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
    });
  }
}

/// Stores rows [0, rows) and columns [0, round_up(cols, 8)) of an SRAM tile to HBM in 16-byte
/// chunks (consecutive threads write consecutive chunks of a row: whole sectors).
template <class T, int kRows, int kCols, int kThreads>
__device__ __forceinline__ void store_tile(T* hbm, std::int64_t ld, const T* sram, int rows, int cols) {
  const int valid_chunks = (cols + 7) / 8;
  for_each_chunk<kRows, kCols, kThreads>([&](int r, int col) {
    if (r < rows && col / 8 < valid_chunks)
      *reinterpret_cast<uint4*>(hbm + r * ld + col) = *reinterpret_cast<const uint4*>(sram + swizzle<kCols>(r, col));
  });
}

}  // namespace flashlab::gpu
