// bulk_copy.cuh — one bulk copy (the TMA's non-tensor form) from global memory into this CTA's shared
// memory, completing `bar`'s transactions when its bytes land (PTX ISA "Data Movement:
// cp.async.bulk", .shared::cluster.global.mbarrier::complete_tx::bytes). `dst` and `bar` are
// shared-memory addresses (v3::smem_addr), `bytes` a multiple of 16. For the microbenchmarks of this
// folder (tma_per_sm.cu, ring_per_sm.cu); the V3 kernel loads through tensor maps (v3_kernel/ptx.cuh).
#pragma once

#include <cstdint>

__device__ __forceinline__ void bulk_load(std::uint32_t dst, const void* src, std::uint32_t bytes, std::uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(reinterpret_cast<std::uint64_t>(src)), "r"(bytes), "r"(bar)
               : "memory");
}
