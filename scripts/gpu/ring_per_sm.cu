// ring_per_sm.cu — what a K/V stage ring of one or two stages costs a V3 consumer loop, with the loop's
// arithmetic replaced by spins of known length: the ring's own turnaround, measured apart from the
// kernel's GEMMs and softmax (docs/model.md "One stage"; the time model's one_stage_cycle,
// sim/src/time/v3_work.cpp, and the timeline's ring, v3_timeline.cpp).
//
// Each thread block (one per SM, or one alone) is a miniature of scripts/gpu/v3_kernel/v3_forward.cuh's
// ring: a producer warpgroup whose thread 0 loads K_n and V_n of `bytes` each (cp.async.bulk into
// stage n mod S, PTX ISA "Data Movement: cp.async.bulk"; full and empty mbarriers per stage, as the
// kernel's Loader::load_kv, in the kernel's order K_0, V_0, K_1, V_1, ...) and G consumer warpgroups that
// take turns through named barriers (the kernel's ping-pong: pp_sync / pp_arrive) and run its
// compiled loop (docs/model.md "The compiled order"): wait for K_n's stage, take the turn, GEMM0_n into
// the tensor pipe, wait for V_(n-1)'s stage, GEMM1_(n-1) into the pipe, pass the turn, wait for
// GEMM0_n and release K_n, wait for GEMM1_(n-1) and release V_(n-1), then the softmax. The tensor pipe
// is a shared-memory clock (one warpgroup's GEMMs start when the pipe is free: the pipe serves one
// warpgroup's wgmmas at a time, in issue order; each thread of the warpgroup whose turn it is reads the
// clock after the turn's barrier, thread 0 writes it back before passing the turn) and each GEMM is
// `hold` / 2 SM cycles of it (GEMM0 and GEMM1 of one warpgroup: the same FLOPs); the turn spends `pre`
// cycles before its first GEMM can start (the compiled loop's instructions between the ping-pong barrier
// and the first HGMMA); the softmax is a spin of `run` cycles after GEMM1's end. With ksteps > 0 the
// GEMMs are wgmmas instead (real_gemms, ksteps 4 or 8): the tensor pipe, the wgmmas' completion and issue are the
// hardware's, only the operands' values and the softmax are not the kernel's.
// With run = 0 the loop is the ring's alone: a step is G x hold cycles of the pipe plus what the ring
// adds (the last release of a block to the next block's landing: the producer's wake, its two copies
// and the consumers' wake).
//
// Sources per thread block (mode): "own" — 4 K and 4 V blocks of its own, cycled through, read once
// untimed first (in the L2: 132 SMs x 8 x 32 KiB = 35 MB); "shared" — every thread block the same 4 + 4
// blocks (Hopper's L2 merges requests for the same lines); "stream" — 512 + 512 blocks of its own
// (16 KiB only: 2.2 GB, every copy a DRAM read). Per config: CUDA events around one launch (nothing
// else between them), the median of 9 after 3 warm-ups; the SM clock of the last launch
// (sm_clock.cuh). ns_per_step: the launch's time over its steps (the launch's start and the ring's
// first fill amortised over 2,000 steps); cycles_per_step: the same at the launch's SM clock.
//
// Build and run (the GPU machine):
//   nvcc -O3 -gencode arch=compute_90a,code=sm_90a -I scripts/gpu -I scripts/gpu/v3_kernel -o /tmp/ring_per_sm scripts/gpu/ring_per_sm.cu && /tmp/ring_per_sm
// Prints one JSON object: {"sms", "gpu", "steps", "rows": [{"mode", "blocks", "stages", "groups",
// "bytes", "hold", "run", "pre", "ksteps", "ms", "ghz", "ns_per_step", "cycles_per_step"}, ...]}.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bulk_copy.cuh"
#include "cuda_check.cuh"
#include "event_timing.cuh"
#include "ptx.cuh"
#include "sm_clock.cuh"
#include "wgmma.cuh"
#include "wgmma_desc.cuh"

namespace {

constexpr int kMaxGroups = 3;
constexpr int kMaxStages = 2;
constexpr int kSteps = 2000;       // K/V blocks per thread block and launch
constexpr int kL2Sources = 4;      // "own" and "shared": blocks of K (and of V) cycled through
constexpr int kStreamSources = 512;  // "stream": every copy new lines

struct Ring {
  unsigned long long bars[4 * kMaxStages];  // k_full, k_empty, v_full, v_empty per stage
  long long pipe_free[2];  // the tensor pipe's next free cycle, by the parity of the turn that wrote it
};

__device__ __forceinline__ void spin_until(long long until) {
  while (clock64() < until) {
  }
}

// The consumer loop with the GEMMs as wgmmas (kSteps > 0): each GEMM kSteps x wgmma m64n128k16 SS
// (d 64: GEMM0 64 x 128 x 64 and GEMM1 64 x 64 x 128 are 4 each in FLOPs; d 128: 8), GEMM0's B the K
// stage, GEMM1's the V stage, A a 2 KiB slice of this warpgroup's own (the values do not matter), one
// accumulator for both; the waits and releases in the compiled order, as the spun loop. The first and
// last steps are peeled (as the kernel's Consumer::tile) so that no wgmma sits on a branch ptxas
// cannot see is uniform (it would serialize them).
template <int kSteps, class KFull, class KEmpty, class VFull, class VEmpty>
__device__ void real_gemms(int c, int groups, int run, int pre, int steps, int stages, std::uint32_t bytes,
                           unsigned char* buf, KFull k_full, KEmpty k_empty, VFull v_full, VEmpty v_empty) {
  const bool lane0 = threadIdx.x % 32 == 0;
  const std::uint32_t base = v3::smem_addr(buf);
  const std::uint64_t a = make_desc(base + 2 * std::uint32_t(stages) * bytes + std::uint32_t(c) * 2048);
  float acc[64];
#pragma unroll
  for (int k = 0; k < 64; ++k) acc[k] = 0.f;
  auto gemm = [&](std::uint32_t stage_addr) {
    const std::uint64_t b = make_desc(stage_addr);
    v3::reg_fence(acc);
    v3::wgmma_fence();
#pragma unroll
    for (int k = 0; k < kSteps; ++k) v3::wgmma_ss<128, false, 0, 0>(acc, a, b, 1);
    v3::wgmma_commit();
    v3::reg_fence(acc);
  };
  auto k_addr = [&](int s) { return base + std::uint32_t(s) * bytes; };
  auto v_addr = [&](int s) { return base + std::uint32_t(stages + s) * bytes; };
  auto release = [&](std::uint32_t bar) {
    __syncwarp();
    if (lane0) v3::mbar_arrive(bar);
  };
  // step 0: GEMM0_0 alone
  v3::mbar_wait(k_full(0), 0);
  v3::named_sync(1 + c, 256);
  spin_until(clock64() + pre);
  gemm(k_addr(0));
  if (!(steps == 1 && c == groups - 1)) v3::named_arrive(1 + (c + 1) % groups, 256);
  v3::wgmma_wait<0>();
  v3::reg_fence(acc);
  release(k_empty(0));
  spin_until(clock64() + run);
  for (int n = 1; n < steps; ++n) {
    const int s = n % stages, ph = (n / stages) & 1, ps = (n - 1) % stages, pph = ((n - 1) / stages) & 1;
    v3::mbar_wait(k_full(s), ph);
    v3::named_sync(1 + c, 256);
    spin_until(clock64() + pre);
    gemm(k_addr(s));
    v3::mbar_wait(v_full(ps), pph);
    gemm(v_addr(ps));
    if (!(n == steps - 1 && c == groups - 1)) v3::named_arrive(1 + (c + 1) % groups, 256);
    v3::wgmma_wait<1>();
    v3::reg_fence(acc);
    release(k_empty(s));
    v3::wgmma_wait<0>();
    v3::reg_fence(acc);
    release(v_empty(ps));
    spin_until(clock64() + run);
  }
  // the last block's deferred GEMM1, outside the turns
  const int ps = (steps - 1) % stages, pph = ((steps - 1) / stages) & 1;
  v3::mbar_wait(v_full(ps), pph);
  gemm(v_addr(ps));
  v3::wgmma_wait<0>();
  v3::reg_fence(acc);
  release(v_empty(ps));
  if (acc[0] == 12345.f) buf[0] = 1;  // keeps the accumulator live
}

// `src`: K blocks at [0, sources) x bytes of this block's region, V blocks after them
__global__ void __launch_bounds__(128 * (1 + kMaxGroups), 1)
    ring(const char* __restrict__ src, std::uint32_t bytes, int stages, int groups, int hold, int run, int pre,
         int ksteps, int sources, bool shared_src, int steps, unsigned long long* clock) {
  extern __shared__ __align__(128) unsigned char buf[];  // K stages, then V stages
  __shared__ Ring r;
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  auto k_full = [&](int s) { return v3::smem_addr(&r.bars[s]); };
  auto k_empty = [&](int s) { return v3::smem_addr(&r.bars[kMaxStages + s]); };
  auto v_full = [&](int s) { return v3::smem_addr(&r.bars[2 * kMaxStages + s]); };
  auto v_empty = [&](int s) { return v3::smem_addr(&r.bars[3 * kMaxStages + s]); };
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      v3::mbar_init(k_full(s), 1);
      v3::mbar_init(v_full(s), 1);
      v3::mbar_init(k_empty(s), 4 * groups);  // one lane of each consumer warp
      v3::mbar_init(v_empty(s), 4 * groups);
    }
    r.pipe_free[0] = r.pipe_free[1] = 0;
    v3::fence_mbar_init();
  }
  __syncthreads();
  clock_begin(clock);
  const char* base = src + (shared_src ? 0 : std::size_t(blockIdx.x) * 2 * sources * bytes);
  if (wg == 0) {
    if (tid == 0) {  // the producer: K_n then V_n, each into its stage once the consumers released it
      for (int n = 0; n < steps; ++n) {
        const int s = n % stages, ph = (n / stages) & 1;
        const char* k = base + std::size_t(n % sources) * bytes;
        v3::mbar_wait(k_empty(s), ph ^ 1);
        v3::mbar_arrive_expect_tx(k_full(s), bytes);
        bulk_load(v3::smem_addr(buf + std::size_t(s) * bytes), k, bytes, k_full(s));
        v3::mbar_wait(v_empty(s), ph ^ 1);
        v3::mbar_arrive_expect_tx(v_full(s), bytes);
        bulk_load(v3::smem_addr(buf + std::size_t(stages + s) * bytes), k + std::size_t(sources) * bytes, bytes,
                  v_full(s));
      }
    }
  } else {
    const int c = wg - 1;  // consumer warpgroup c takes its turn after c - 1 (ping-pong's named barriers)
    const bool lane0 = tid % 32 == 0;
    if (c == groups - 1) v3::named_arrive(1, 256);  // warpgroup 0 takes the first turn
    if (ksteps == 4) {
      real_gemms<4>(c, groups, run, pre, steps, stages, bytes, buf, k_full, k_empty, v_full, v_empty);
    } else if (ksteps == 8) {
      real_gemms<8>(c, groups, run, pre, steps, stages, bytes, buf, k_full, k_empty, v_full, v_empty);
    } else
    for (int n = 0; n <= steps; ++n) {
      const bool gemm0 = n < steps, gemm1 = n > 0;  // the last step: the last block's deferred GEMM1
      const int s = n % stages, ph = (n / stages) & 1, ps = (n - 1 + stages) % stages, pph = ((n - 1) / stages) & 1;
      // turn t = n G + c reads the pipe's free cycle turn t - 1 wrote (every thread, after the barrier
      // that turn's arrive completed) and writes it for turn t + 1 (the other slot: turn t + 1 reads it
      // only after this turn's arrive, turn t + 2 writes it only after turn t + 1's)
      const int t = n * groups + c;
      long long end0 = 0, end1 = 0;
      if (gemm0) {
        v3::mbar_wait(k_full(s), ph);
        v3::named_sync(1 + c, 256);
        spin_until(clock64() + pre);  // the turn's instructions before its first wgmma issues
        end0 = max(clock64(), r.pipe_free[t & 1]) + hold / 2;
      }
      if (gemm1) {
        v3::mbar_wait(v_full(ps), pph);
        end1 = max(clock64(), gemm0 ? end0 : r.pipe_free[t & 1]) + hold / 2;
      }
      if (gemm0) {
        if (tid == 0) r.pipe_free[(t + 1) & 1] = gemm1 ? end1 : end0;
        if (!(n == steps - 1 && c == groups - 1)) v3::named_arrive(1 + (c + 1) % groups, 256);
        spin_until(end0);
        __syncwarp();
        if (lane0) v3::mbar_arrive(k_empty(s));
      }
      if (gemm1) {
        spin_until(end1);
        __syncwarp();
        if (lane0) v3::mbar_arrive(v_empty(ps));
      }
      spin_until(clock64() + run);
    }
  }
  __syncthreads();
  clock_end(clock);
}

struct Config {
  const char* mode;  // "one_sm", "own", "shared", "stream"
  int stages, groups;
  std::uint32_t bytes;
  int hold, run;  // SM cycles: one warpgroup's GEMM0 + GEMM1 in the pipe; its softmax
  int pre = 0;     // SM cycles of its turn before its first wgmma issues
  int ksteps = 0;  // 4 or 8: the GEMMs as wgmmas, ksteps m64n128k16 each (hold unused); 0: spun
};

}  // namespace

int main() {
  CHECK(cudaSetDevice(0));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  CHECK(cudaFuncSetAttribute(ring, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             2 * kMaxStages * 32768 + kMaxGroups * 2048));
  // The shapes of V3's FA3 tiles on the H200 (the time model's figures at 1.78 GHz, the SM clock its
  // d = 64 launches kept): d = 64, B_r = 192 (3 consumer warpgroups), B_c = 128: K_j 16 KiB, one
  // warpgroup's GEMM0 + GEMM1 288 ns = 513 cycles, its softmax and the rest 1,247 ns = 2,220 cycles;
  // d = 128, B_r = 128 (2), B_c = 128: 32 KiB, 577 ns = 1,027 cycles, 1,029 ns = 1,832 cycles. Each
  // swept over the softmax's length (0: the ring alone) with one and two stages.
  std::vector<Config> configs;
  const int runs64[] = {0, 740, 1480, 2220, 2960};
  const int runs128[] = {0, 610, 1220, 1832, 2440};
  for (const char* m : {"one_sm", "own", "shared"})
    for (int st : {1, 2}) {
      for (int run : runs64) configs.push_back({m, st, 3, 16384, 513, run});
      for (int run : runs128) configs.push_back({m, st, 2, 32768, 1027, run});
    }
  for (int st : {1, 2})
    for (int run : {0, 2220}) configs.push_back({"stream", st, 3, 16384, 513, run});
  // the turn's issue section (the compiled loop's instructions from the ping-pong barrier to the first
  // HGMMA: about 12 without a mask and 34 under a causal one at d = 64, loop_order.py, at 4.4-5.1
  // cycles each): 0 to 360 cycles at FA3's proportions of both shapes
  for (int st : {1, 2})
    for (int pre : {60, 120, 180, 240, 360}) {
      configs.push_back({"own", st, 3, 16384, 513, 2220, pre});
      configs.push_back({"own", st, 2, 32768, 1027, 1832, pre});
    }
  // the GEMMs as wgmmas on the stages (d = 64: 4 m64n128k16 a GEMM, d = 128: 8), the softmax spun
  for (int st : {1, 2}) {
    for (int run : {0, 1480, 2220, 2960}) configs.push_back({"own", st, 3, 16384, 513, run, 0, 4});
    configs.push_back({"own", st, 3, 16384, 513, 2220, 180, 4});
    configs.push_back({"one_sm", st, 3, 16384, 513, 0, 0, 4});
    for (int run : {0, 1220, 1832, 2440}) configs.push_back({"own", st, 2, 32768, 1027, run, 0, 8});
    configs.push_back({"one_sm", st, 2, 32768, 1027, 0, 0, 8});
  }
  const std::size_t region_l2 = std::size_t(2) * kL2Sources * 32768, region_stream = std::size_t(2) * kStreamSources * 16384;
  const std::size_t src_bytes = std::size_t(sms) * std::max(region_l2, region_stream);
  char* src = nullptr;
  CHECK(cudaMalloc(&src, src_bytes));
  CHECK(cudaMemset(src, 1, src_bytes));
  std::printf("{\"sms\": %d, \"gpu\": \"%s\", \"steps\": %d, \"rows\": [", sms, prop.name, kSteps);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config& x = configs[i];
    const std::string mode = x.mode;
    const int blocks = mode == "one_sm" ? 1 : sms;
    const int sources = mode == "stream" ? kStreamSources : kL2Sources;
    SmClock clock(blocks);
    const std::size_t smem = std::size_t(2) * x.stages * x.bytes + kMaxGroups * 2048;
    const auto launch = [&] {
      ring<<<blocks, 128 * (1 + x.groups), smem>>>(src, x.bytes, x.stages, x.groups, x.hold, x.run, x.pre, x.ksteps, sources,
                                                   mode == "shared", kSteps, clock.device());
    };
    launch();  // the sources into the L2: read once untimed
    CHECK(cudaDeviceSynchronize());
    const double ms = median_ms(launch, 9, 3);
    const double ghz = clock.ghz();
    std::printf("%s\n {\"mode\": \"%s\", \"blocks\": %d, \"stages\": %d, \"groups\": %d, \"bytes\": %u, \"hold\": %d, "
                "\"run\": %d, \"pre\": %d, \"ksteps\": %d, \"ms\": %.6f, \"ghz\": %.4f, \"ns_per_step\": %.2f, \"cycles_per_step\": %.1f}",
                i ? "," : "", x.mode, blocks, x.stages, x.groups, x.bytes, x.hold, x.run, x.pre, x.ksteps, ms, ghz,
                ms * 1e6 / kSteps, ms * 1e6 / kSteps * ghz);
    std::fflush(stdout);
  }
  std::printf("\n]}\n");
  CHECK(cudaFree(src));
  return 0;
}
