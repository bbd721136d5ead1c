// mma.cuh — tensor-core building blocks: element types, ldmatrix and mma.sync m16n8k16.
//
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16"), lane = 4 g + t:
//   A (16 x 16, row-major), 4 regs of 2 elements: a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..),
//     a3 (g+8, 2t+8..)
//   B (16 x 8, k x n), 2 regs: b0 (k = 2t..2t+1, n = g), b1 (k = 2t+8.., n = g)
//   C (16 x 8 fp32), 4 floats: c0, c1 (g, 2t..2t+1), c2, c3 (g+8, 2t..2t+1)
// So two neighbouring C tiles (n = 0..7, 8..15) of S are exactly the A fragment of P for one
// 16-key chunk of P V: the scores never leave the registers (FA2 §3.1).
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace flashlab::gpu {

/// Element traits of the input type T (__half or __nv_bfloat16): pack two fp32 values into one
/// 32-bit register of T (round to nearest), and convert one value each way.
template <class T>
struct ElemTraits {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "fp16 or bf16");
  static constexpr bool kHalf = std::is_same_v<T, __half>;
  static __device__ __forceinline__ std::uint32_t pack(float a, float b) {
    std::uint32_t bits;
    if constexpr (kHalf) {
      const __half2 h = __floats2half2_rn(a, b);
      memcpy(&bits, &h, 4);
    } else {
      const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
      memcpy(&bits, &h, 4);
    }
    return bits;
  }
  static __device__ __forceinline__ float to_float(T x) {
    if constexpr (kHalf) return __half2float(x);
    else return __bfloat162float(x);
  }
  static __device__ __forceinline__ T from_float(float x) {
    if constexpr (kHalf) return __float2half_rn(x);
    else return __float2bfloat16_rn(x);
  }
};

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

/// Four 8 x 8 matrices of 16-bit elements from shared memory; lane l gives the address of row
/// l % 8 of matrix l / 8 (a shared-window address, smem_addr, or a pointer into shared memory).
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* p) { ldmatrix_x4(r, smem_addr(p)); }

/// The same, each matrix transposed (for V, stored key-major but needed as the k x n operand).
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* p) {
  ldmatrix_x4_trans(r, smem_addr(p));
}

/// One 32-bit store to shared memory at a shared-window address (smem_addr).
__device__ __forceinline__ void st_shared_b32(std::uint32_t addr, std::uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

/// c += a b on one 16 x 8 x 16 tile, fp32 accumulation.
template <class T>
__device__ __forceinline__ void mma_16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                          std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

}  // namespace flashlab::gpu
