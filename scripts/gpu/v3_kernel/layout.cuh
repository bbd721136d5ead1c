// layout.cuh — V3's shared-memory tiles and the wgmma matrix descriptors that read them (sm_90a).
//
// A tile of `rows` x D elements (fp16/bf16, D a multiple of 64) is stored as D/64 column chunks; chunk
// c holds columns 64c..64c+63 of every row, one row per 128 bytes, rows consecutive, with the 128-byte
// swizzle that the bulk tensor copy writes (CU_TENSOR_MAP_SWIZZLE_128B: the 16-byte unit u of row r
// lands at unit u ^ (r % 8)). Each chunk starts 1024-byte aligned, so the swizzle atoms (8 rows x
// 128 bytes) line up with what wgmma expects (PTX ISA "Warpgroup Level Matrix Multiply-Accumulate:
// Shared Memory Matrix Layout", 128B swizzle; base offset 0).
//
// Descriptor format (PTX ISA "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29 the
// leading-dimension byte offset (LBO) >> 4, 32-45 the stride-dimension byte offset (SBO) >> 4, 62-63
// the swizzle mode (1 = 128B). The canonical 128B-swizzled layouts (as CUTLASS's
// make_gmma_desc documents them, T = 8 elements of 16 bits):
//   K-major  ((8,m),(T,2k)) : ((8T,SBO),(1,T))        -- rows of 64 K-elements; SBO = 8 rows = 1024 B
//   MN-major ((T,8,m),(8,k)) : ((1,T,LBO),(8T,SBO))   -- rows of 64 MN-elements; SBO = 8 K-rows = 1024 B,
//                                                        LBO = the step to the next 64 MN-elements
#pragma once

#include <cstdint>

namespace v3 {

constexpr int kChunkCols = 64;   // elements of one 128-byte swizzled row
constexpr int kRowBytes = 128;
constexpr int kAtomBytes = 1024;  // 8 rows x 128 bytes

// Bytes of one chunk of a rows x 64 tile, and of the whole rows x D tile.
__host__ __device__ constexpr int chunk_bytes(int rows) { return rows * kRowBytes; }
__host__ __device__ constexpr int tile_bytes(int rows, int d) { return (d / kChunkCols) * chunk_bytes(rows); }

// K-major, 128B swizzle: the operand's rows are M (or N) and each row holds K contiguously. The k16
// slice kk (0..3) of a chunk starts kk*32 bytes into its first row (the swizzle is applied by the
// hardware on the absolute address). LBO is unused for swizzled K-major layouts (1 by convention).
__device__ __forceinline__ std::uint64_t desc_kmajor_sw128(std::uint32_t addr) {
  return (std::uint64_t((addr & 0x3FFFF) >> 4)) | (std::uint64_t(1) << 16) | (std::uint64_t(kAtomBytes >> 4) << 32) |
         (std::uint64_t(1) << 62);
}

// MN-major, 128B swizzle (used with the transpose bit): rows are K, each row holds 64 MN-elements;
// chunk_stride: bytes from one 64-element MN chunk to the next (the tile's chunk_bytes(rows)).
__device__ __forceinline__ std::uint64_t desc_mnmajor_sw128(std::uint32_t addr, std::uint32_t chunk_stride) {
  return (std::uint64_t((addr & 0x3FFFF) >> 4)) | (std::uint64_t((chunk_stride >> 4) & 0x3FFF) << 16) |
         (std::uint64_t(kAtomBytes >> 4) << 32) | (std::uint64_t(1) << 62);
}

// Accumulator fragment of wgmma m64nN (fp32; PTX ISA "Register Fragments: wgmma .m64nNk16, D"):
// thread `lane` of warp `w` (0..3 in its warpgroup) holds, for each 8-column block cb,
//   acc[4cb+0], acc[4cb+1] at row 16w + lane/4,     columns 8cb + 2(lane%4) + {0,1}
//   acc[4cb+2], acc[4cb+3] at row 16w + lane/4 + 8, the same columns.
// A fragment of wgmma m64k16 (16-bit, registers a[0..3]): a[0] row lane/4 cols 2(lane%4)+{0,1},
// a[1] row +8, a[2] cols +8, a[3] row +8 cols +8 — so acc[8kk..8kk+7] packed in pairs are the A
// fragment of k-slice kk (FA2/FA3's accumulator-to-operand reuse).
struct Frag {
  int row;  // row of acc[4cb+0] within the warpgroup's 64 rows
  int col;  // column of acc[4cb+0] within its 8-column block
  __device__ __forceinline__ explicit Frag(int tid_in_wg)
      : row(16 * (tid_in_wg / 32) + (tid_in_wg % 32) / 4), col(2 * (tid_in_wg % 4)) {}
};

}  // namespace v3
