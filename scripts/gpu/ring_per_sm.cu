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
// warpgroup's wgmmas at a time, in issue order) and each GEMM is `hold` / 2 SM cycles of it (GEMM0 and
// GEMM1 of one warpgroup: the same FLOPs); the softmax is a spin of `run` cycles after GEMM1's end.
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
//   nvcc -O3 -arch=sm_90a -I scripts/gpu -I scripts/gpu/v3_kernel -o /tmp/ring_per_sm scripts/gpu/ring_per_sm.cu && /tmp/ring_per_sm
// Prints one JSON object: {"sms", "gpu", "steps", "rows": [{"mode", "blocks", "stages", "groups",
// "bytes", "hold", "run", "ms", "ghz", "ns_per_step", "cycles_per_step"}, ...]}.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bulk_copy.cuh"
#include "cuda_check.cuh"
#include "event_timing.cuh"
#include "ptx.cuh"
#include "sm_clock.cuh"

namespace {

constexpr int kMaxGroups = 3;
constexpr int kMaxStages = 2;
constexpr int kSteps = 2000;       // K/V blocks per thread block and launch
constexpr int kL2Sources = 4;      // "own" and "shared": blocks of K (and of V) cycled through
constexpr int kStreamSources = 512;  // "stream": every copy new lines

struct Ring {
  unsigned long long bars[4 * kMaxStages];  // k_full, k_empty, v_full, v_empty per stage
  long long pipe_free;                      // the tensor pipe's next free cycle
  long long slot[kMaxGroups][2];            // a warpgroup's GEMM0 and GEMM1 end cycles
};

__device__ __forceinline__ void spin_until(long long until) {
  while (clock64() < until) {
  }
}

// `src`: K blocks at [0, sources) x bytes of this block's region, V blocks after them
__global__ void __launch_bounds__(128 * (1 + kMaxGroups), 1)
    ring(const char* __restrict__ src, std::uint32_t bytes, int stages, int groups, int hold, int run, int sources,
         bool shared_src, int steps, unsigned long long* clock) {
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
    r.pipe_free = 0;
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
    for (int n = 0; n <= steps; ++n) {
      const bool gemm0 = n < steps, gemm1 = n > 0;  // the last step: the last block's deferred GEMM1
      const int s = n % stages, ph = (n / stages) & 1, ps = (n - 1 + stages) % stages, pph = ((n - 1) / stages) & 1;
      if (gemm0) {
        v3::mbar_wait(k_full(s), ph);
        v3::named_sync(1 + c, 256);
        if (tid == 0) {
          const long long start = max(clock64(), r.pipe_free);
          r.slot[c][0] = start + hold / 2;
          r.pipe_free = r.slot[c][0];
        }
      }
      if (gemm1) {
        v3::mbar_wait(v_full(ps), pph);
        if (tid == 0) {
          const long long start = max(clock64(), r.pipe_free);
          r.slot[c][1] = start + hold / 2;
          r.pipe_free = r.slot[c][1];
        }
      }
      v3::named_sync(4 + c, 128);  // the warpgroup sees its slots
      if (gemm0 && !(n == steps - 1 && c == groups - 1)) v3::named_arrive(1 + (c + 1) % groups, 256);
      if (gemm0) {
        spin_until(r.slot[c][0]);
        __syncwarp();
        if (lane0) v3::mbar_arrive(k_empty(s));
      }
      if (gemm1) {
        spin_until(r.slot[c][1]);
        __syncwarp();
        if (lane0) v3::mbar_arrive(v_empty(ps));
      }
      spin_until(clock64() + run);
      v3::named_sync(4 + c, 128);  // the slots are read before the next turn writes them
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
};

}  // namespace

int main() {
  CHECK(cudaSetDevice(0));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  CHECK(cudaFuncSetAttribute(ring, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * kMaxStages * 32768));
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
    const std::size_t smem = std::size_t(2) * x.stages * x.bytes;
    const auto launch = [&] {
      ring<<<blocks, 128 * (1 + x.groups), smem>>>(src, x.bytes, x.stages, x.groups, x.hold, x.run, sources,
                                                   mode == "shared", kSteps, clock.device());
    };
    launch();  // the sources into the L2: read once untimed
    CHECK(cudaDeviceSynchronize());
    const double ms = median_ms(launch, 9, 3);
    const double ghz = clock.ghz();
    std::printf("%s\n {\"mode\": \"%s\", \"blocks\": %d, \"stages\": %d, \"groups\": %d, \"bytes\": %u, \"hold\": %d, "
                "\"run\": %d, \"ms\": %.6f, \"ghz\": %.4f, \"ns_per_step\": %.2f, \"cycles_per_step\": %.1f}",
                i ? "," : "", x.mode, blocks, x.stages, x.groups, x.bytes, x.hold, x.run, ms, ghz,
                ms * 1e6 / kSteps, ms * 1e6 / kSteps * ghz);
    std::fflush(stdout);
  }
  std::printf("\n]}\n");
  CHECK(cudaFree(src));
  return 0;
}
