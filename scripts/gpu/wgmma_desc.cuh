// wgmma_desc.cuh — a shared-memory matrix descriptor for wgmma without swizzling, for the
// microbenchmarks of this folder whose operands' values do not matter (wgmma_ceiling.cu: all ones;
// ring_per_sm.cu: whatever the stage holds). PTX ISA "Matrix Descriptor Format": start address >> 4 in
// bits 0-13, leading-dimension byte offset >> 4 in bits 16-29 (128 B), stride-dimension byte offset
// >> 4 in bits 32-45 (256 B), no swizzle (bits 62-63 = 0): an m64 A or a k16 x N B operand's core
// matrices stay within 16 KiB of the start. The V3 kernel builds its own, swizzled (v3_kernel/layout.cuh).
#pragma once

#include <cstdint>

__device__ __forceinline__ std::uint64_t make_desc(std::uint32_t smem_addr) {
  return (std::uint64_t(smem_addr >> 4) & 0x3FFF) | (std::uint64_t(128 >> 4) << 16) | (std::uint64_t(256 >> 4) << 32);
}
