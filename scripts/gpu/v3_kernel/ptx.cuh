// ptx.cuh — thin inline-PTX wrappers for V3's Hopper forward (sm_90a): mbarriers, the bulk tensor
// copy (TMA), named barriers, setmaxnreg, the async-proxy fence and wgmma's fence/commit/wait.
// Each wrapper cites its section of the PTX ISA (version 8.x), by instruction name.
// Shared-memory addresses are 32-bit shared-window addresses (smem_addr()). The wgmma instructions
// themselves, one per shape, are generated into wgmma.cuh by gen_wgmma.py.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace v3 {

// The 32-bit shared-state-space address of a generic pointer into shared memory (cvta.to.shared).
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier (PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier")
// mbarrier.init: `count` arrivals complete a phase.
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// fence.mbarrier_init (PTX ISA "membar/fence"): the inits, visible to the async proxy (TMA).
__device__ __forceinline__ void fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// mbarrier.arrive.expect_tx (PTX ISA "mbarrier.expect_tx", "mbarrier.arrive"): one arrival, and `bytes` more transactions expected
// in the current phase (the TMA copies complete them: complete_tx::bytes).
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// mbarrier.arrive (PTX ISA "mbarrier.arrive"): one arrival (release semantics at CTA scope).
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// mbarrier.try_wait.parity (PTX ISA "mbarrier.test_wait/mbarrier.try_wait"): spin until the phase of parity `parity` has completed
// (a fresh barrier is in phase 0, so waiting for parity 1 returns at once).
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// ---- bulk tensor copy (PTX ISA "Data Movement: cp.async.bulk.tensor"): a 4-d box of the tensor map at
// coordinates (c0 innermost .. c3) into shared memory at dst, completing `bar`'s transactions.
// Out-of-bounds elements of the box are filled with zeros (the tensor map's OOB fill: none = 0).
__device__ __forceinline__ void tma_load_4d(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int c0,
                                            int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
// prefetch.tensormap (PTX ISA "prefetch, prefetchu"): the tensor map's descriptor into the cache.
__device__ __forceinline__ void prefetch_tmap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// ---- fences (PTX ISA "membar/fence"): generic-proxy shared-memory writes, made visible to the
// async proxy (wgmma operands read from shared memory, TMA).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---- named barriers (PTX ISA "bar, barrier"): barrier `id` (1..15; 0 is __syncthreads) completes
// when `count` threads (a multiple of 32) have arrived; sync waits, arrive does not.
__device__ __forceinline__ void named_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
// barrier.sync without .aligned (PTX ISA "bar, barrier", sm_70+): the same wait, but the warps may
// reach it at different instructions (bar.sync is barrier.sync.aligned: one instruction for all, so
// compute-sanitizer's synccheck reports "divergent threads" when the producer and the consumers sync
// the same barrier from their own code).
__device__ __forceinline__ void named_sync_any(int id, int count) {
  asm volatile("barrier.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// ---- setmaxnreg (PTX ISA "Miscellaneous Instructions: setmaxnreg", sm_90a): this warpgroup's register budget per thread, down
// (dec: the producer) or up (inc: the consumers); needs a register cap at kernel entry
// (__launch_bounds__(threads, 1)).
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// ---- wgmma bookkeeping (PTX ISA "Warpgroup MMA: wgmma.fence, wgmma.commit_group, wgmma.wait_group"):
// wgmma.fence: prior register writes (accumulators, A fragments) ordered before the next wgmma.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// wgmma.commit_group: the wgmma issued since the last commit form one group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// wgmma.wait_group N: until at most N groups are in flight.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// A compiler-only fence on registers an in-flight wgmma reads or writes: no use of them moves across
// it (CUTLASS's warpgroup_fence_operand idea). Placed before an issue and after the matching wait.
template <int N>
__device__ __forceinline__ void reg_fence(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void reg_fence(std::uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// ex2.approx.ftz.f32 (PTX ISA "Floating Point Instructions: ex2"): 2^x on the special-function unit.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace v3
