// ceilings.cu — measured ceilings of the units a FlashAttention forward pass uses, for the time
// model (issue 11): the mma.sync fp16/bf16 rate (FA2 runs mma.sync m16n8k16, not wgmma), the exp
// rate (ex2.approx on the special-function unit), the FP32 FMA rate, shared-memory bandwidth,
// L2 bandwidth, DRAM bandwidth (read, and copy), the cost of one __syncthreads() and of one
// kernel launch. Each figure is the median of several timed repetitions (CUDA events), after a
// warm-up; the whole GPU is filled (blocks on every SM). Beside each SM-bound rate, the SM clock its
// last timed launch ran at (sm_clock.cuh: the rate per cycle is the rate over that clock; the barrier's
// cycles below are its nanoseconds at the device's nominal clock). Prints one JSON object on stdout.
//
// Build and run: scripts/gpu/ceilings.sh (nvcc -O3 -arch=sm_90).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "event_timing.cuh"
#include "sm_clock.cuh"

namespace {

// ---- tensor cores: mma.sync.m16n8k16, fp32 accumulate, 4 independent accumulators per warp ----
constexpr int kMmaChains = 4;
constexpr int kMmaIters = 4096;

template <bool kBf16>
__global__ void mma_kernel(float* sink, std::uint32_t seed, unsigned long long* clk) {
  clock_begin(clk);
  std::uint32_t a[4], b[2];
  for (int k = 0; k < 4; ++k) a[k] = seed * (threadIdx.x + 1) + k;
  for (int k = 0; k < 2; ++k) b[k] = seed ^ (threadIdx.x * 7 + k);
  float c[kMmaChains][4] = {};
  for (int it = 0; it < kMmaIters; ++it) {
#pragma unroll
    for (int ch = 0; ch < kMmaChains; ++ch) {
      if constexpr (kBf16) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(c[ch][0]), "+f"(c[ch][1]), "+f"(c[ch][2]), "+f"(c[ch][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(c[ch][0]), "+f"(c[ch][1]), "+f"(c[ch][2]), "+f"(c[ch][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      }
    }
  }
  clock_end(clk);
  float s = 0;
  for (int ch = 0; ch < kMmaChains; ++ch) s += c[ch][0] + c[ch][1] + c[ch][2] + c[ch][3];
  if (s == 1.2345f) sink[threadIdx.x] = s;  // never true in practice; keeps the work alive
}

// ---- special-function unit: ex2.approx.ftz.f32, 8 independent chains per thread ----
constexpr int kSfuChains = 8;
constexpr int kSfuIters = 4096;

__global__ void ex2_kernel(float* sink, float seed, unsigned long long* clk) {
  clock_begin(clk);
  float x[kSfuChains];
  for (int k = 0; k < kSfuChains; ++k) x[k] = seed * 1e-3f * float(threadIdx.x + k);
  for (int it = 0; it < kSfuIters; ++it) {
#pragma unroll
    for (int k = 0; k < kSfuChains; ++k) {
      float y;
      asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x[k]));
      x[k] = y * -0.5f;  // stays in (-1, 1): ex2 of it stays finite
    }
  }
  clock_end(clk);
  float s = 0;
  for (int k = 0; k < kSfuChains; ++k) s += x[k];
  if (s == 1.2345f) sink[threadIdx.x] = s;
}

// ---- FP32: fused multiply-add, 8 independent chains per thread ----
constexpr int kFmaChains = 8;
constexpr int kFmaIters = 8192;

__global__ void fma_kernel(float* sink, float seed, unsigned long long* clk) {
  clock_begin(clk);
  float x[kFmaChains];
  for (int k = 0; k < kFmaChains; ++k) x[k] = seed + float(threadIdx.x + k);
  const float m = 0.999f, a = 1e-3f;
  for (int it = 0; it < kFmaIters; ++it) {
#pragma unroll
    for (int k = 0; k < kFmaChains; ++k) x[k] = fmaf(x[k], m, a);
  }
  clock_end(clk);
  float s = 0;
  for (int k = 0; k < kFmaChains; ++k) s += x[k];
  if (s == 1.2345f) sink[threadIdx.x] = s;
}

// ---- shared memory: 16-byte loads, conflict-free (consecutive threads, consecutive 16 B) ----
constexpr int kSmemIters = 4096;
constexpr int kSmemThreads = 1024;

__global__ void smem_kernel(float* sink, unsigned long long* clk) {
  clock_begin(clk);
  __shared__ float4 buf[kSmemThreads * 2];
  buf[threadIdx.x] = make_float4(threadIdx.x, 1, 2, 3);
  buf[threadIdx.x + kSmemThreads] = make_float4(3, 2, 1, threadIdx.x);
  __syncthreads();
  float4 acc = make_float4(0, 0, 0, 0);
  unsigned idx = threadIdx.x;
  const auto base = static_cast<unsigned>(__cvta_generic_to_shared(buf));
  for (int it = 0; it < kSmemIters; ++it) {
    float4 v;
    // a volatile load: neither the compiler nor ptxas may keep the (unchanging) value in registers
    asm volatile("ld.volatile.shared.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(base + idx * 16u));
    acc.x += v.x;
    acc.y += v.y;
    acc.z += v.z;
    acc.w += v.w;
    idx ^= kSmemThreads;  // alternate halves
  }
  clock_end(clk);
  if (acc.x + acc.y + acc.z + acc.w == 1.2345f) sink[threadIdx.x] = acc.x;
}

// ---- global memory reads (L2 when the buffer fits, DRAM when it does not) and copies ----
__global__ void read_kernel(const float4* __restrict__ in, std::size_t n, int passes, float* sink) {
  float acc = 0;
  for (int p = 0; p < passes; ++p)
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
         k += std::size_t(gridDim.x) * blockDim.x) {
      const float4 v = __ldcg(in + k);  // cache in L2 only (not L1): the L2 is what is measured
      acc += v.x + v.y + v.z + v.w;
    }
  if (acc == 1.2345f) sink[threadIdx.x] = acc;
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x)
    out[k] = in[k];
}

// ---- barriers: one __syncthreads() per iteration, nothing else ----
constexpr int kBarrierIters = 16384;

__global__ void barrier_kernel(float* sink, unsigned long long* clk) {
  clock_begin(clk);
  float x = threadIdx.x;
  for (int it = 0; it < kBarrierIters; ++it) {
    __syncthreads();
    x += 1.0f;
  }
  clock_end(clk);
  if (x == 1.2345f) sink[threadIdx.x] = x;
}

__global__ void empty_kernel() {}

// Median time in milliseconds of `reps` runs of `body`, after `warm` runs.

/// The L2 and DRAM rates in GB/s: a 24 MiB buffer (under the 60 MB L2 even with its two
/// partitions) read 20 times in one launch; 4 GiB read once from DRAM; 2 GiB copied to 2 GiB (the
/// copy's rate counts the bytes read and written).
struct MemoryRates {
  double l2_gbps, dram_read_gbps, dram_copy_gbps;
};
MemoryRates memory_rates(int sms, float* sink) {
  const std::size_t l2_n = (24u << 20) / sizeof(float4);
  const std::size_t dram_n = (std::size_t(4) << 30) / sizeof(float4);
  float4 *big = nullptr, *big2 = nullptr;
  CHECK(cudaMalloc(&big, dram_n * sizeof(float4)));
  CHECK(cudaMalloc(&big2, dram_n / 2 * sizeof(float4)));
  CHECK(cudaMemset(big, 0x3c, dram_n * sizeof(float4)));  // fp32 0.0115..., not zeros
  const int mem_blocks = sms * 8, mem_threads = 256;
  const int l2_reps = 20;
  const double t_l2 = median_ms([&] { read_kernel<<<mem_blocks, mem_threads>>>(big, l2_n, l2_reps, sink); });
  const double t_dram_read = median_ms([&] { read_kernel<<<mem_blocks, mem_threads>>>(big, dram_n, 1, sink); }, 7, 2);
  const double t_copy =
      median_ms([&] { copy_kernel<<<mem_blocks, mem_threads>>>(big, big2, dram_n / 2); }, 7, 2);
  CHECK(cudaFree(big));
  CHECK(cudaFree(big2));
  return {double(l2_n) * 16 * l2_reps / (t_l2 * 1e-3) / 1e9, double(dram_n) * 16 / (t_dram_read * 1e-3) / 1e9,
          double(dram_n) * 16 / (t_copy * 1e-3) / 1e9};
}

}  // namespace

int main() {
  int dev = 0;
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, dev));
  int sms = prop.multiProcessorCount, clock_khz = 0, mem_clock_khz = 0, driver = 0, runtime = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, dev));
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  float* sink = nullptr;
  CHECK(cudaMalloc(&sink, 4096 * sizeof(float)));

  const int threads = 256, warps = threads / 32;
  const int blocks = sms * 8;  // 8 blocks of 8 warps per SM: 64 warps, the SM's maximum

  // Each timed kernel's SM clock (sm_clock.cuh), from its last timed launch.
  SmClock clock(blocks), smem_clock(sms * 2), bar_clock(sms);
  auto clocked = [](SmClock& c, const std::function<void(unsigned long long*)>& launch, double& ghz) {
    const double ms = median_ms([&] { launch(c.device()); });
    ghz = c.ghz();
    return ms;
  };
  double ghz_f16, ghz_bf16, ghz_ex2, ghz_fma, ghz_smem, ghz_bar4, ghz_bar8;

  // Tensor cores.
  const double mma_flops = double(blocks) * warps * kMmaIters * kMmaChains * (2.0 * 16 * 8 * 16);
  const double t_f16 = clocked(clock, [&](unsigned long long* c) { mma_kernel<false><<<blocks, threads>>>(sink, 7, c); }, ghz_f16);
  const double t_bf16 = clocked(clock, [&](unsigned long long* c) { mma_kernel<true><<<blocks, threads>>>(sink, 7, c); }, ghz_bf16);
  // exp and FMA.
  const double ex2_ops = double(blocks) * threads * kSfuIters * kSfuChains;
  const double t_ex2 = clocked(clock, [&](unsigned long long* c) { ex2_kernel<<<blocks, threads>>>(sink, 0.5f, c); }, ghz_ex2);
  const double fma_ops = double(blocks) * threads * kFmaIters * kFmaChains;
  const double t_fma = clocked(clock, [&](unsigned long long* c) { fma_kernel<<<blocks, threads>>>(sink, 0.5f, c); }, ghz_fma);
  // Shared memory: 2 blocks of 1024 threads per SM.
  const int smem_blocks = sms * 2;
  const double smem_bytes = double(smem_blocks) * kSmemThreads * kSmemIters * 16.0;
  const double t_smem =
      clocked(smem_clock, [&](unsigned long long* c) { smem_kernel<<<smem_blocks, kSmemThreads>>>(sink, c); }, ghz_smem);

  const MemoryRates mem = memory_rates(sms, sink);

  // Barriers: 1 block per SM of 128 threads (4 warps, FA2's forward) and of 256 threads (8 warps).
  const double t_bar4 = clocked(bar_clock, [&](unsigned long long* c) { barrier_kernel<<<sms, 128>>>(sink, c); }, ghz_bar4);
  const double t_bar8 = clocked(bar_clock, [&](unsigned long long* c) { barrier_kernel<<<sms, 256>>>(sink, c); }, ghz_bar8);

  // Launch: 2000 empty kernels back to back on one stream (the gap between dependent launches).
  const int launches = 2000;
  const double t_launch = median_ms([&] {
    for (int k = 0; k < launches; ++k) empty_kernel<<<1, 32>>>();
  }, 5, 1);

  CHECK(cudaFree(sink));

  const double clock_hz = double(clock_khz) * 1e3;
  std::printf("{\n");
  std::printf("  \"device\": \"%s\", \"sms\": %d, \"sm_clock_khz\": %d, \"memory_clock_khz\": %d,\n", prop.name, sms,
              clock_khz, mem_clock_khz);
  std::printf("  \"l2_bytes\": %d, \"smem_per_sm_bytes\": %zu, \"driver_version\": %d, \"runtime_version\": %d,\n",
              prop.l2CacheSize, prop.sharedMemPerMultiprocessor, driver, runtime);
  std::printf("  \"mma_sync_f16_tflops\": %.2f,\n", mma_flops / (t_f16 * 1e-3) / 1e12);
  std::printf("  \"mma_sync_bf16_tflops\": %.2f,\n", mma_flops / (t_bf16 * 1e-3) / 1e12);
  std::printf("  \"ex2_gops\": %.2f,\n", ex2_ops / (t_ex2 * 1e-3) / 1e9);
  std::printf("  \"fp32_fma_gops\": %.2f,\n", fma_ops / (t_fma * 1e-3) / 1e9);
  std::printf("  \"smem_read_gbps\": %.1f,\n", smem_bytes / (t_smem * 1e-3) / 1e9);
  std::printf("  \"l2_read_gbps\": %.1f,\n", mem.l2_gbps);
  std::printf("  \"dram_read_gbps\": %.1f,\n", mem.dram_read_gbps);
  std::printf("  \"dram_copy_gbps\": %.1f,\n", mem.dram_copy_gbps);
  std::printf("  \"barrier_ns_4_warps\": %.2f, \"barrier_cycles_4_warps\": %.1f,\n", t_bar4 * 1e6 / kBarrierIters,
              t_bar4 * 1e-3 / kBarrierIters * clock_hz);
  std::printf("  \"barrier_ns_8_warps\": %.2f, \"barrier_cycles_8_warps\": %.1f,\n", t_bar8 * 1e6 / kBarrierIters,
              t_bar8 * 1e-3 / kBarrierIters * clock_hz);
  // the SM clock each rate above ran at (GHz; -1: not measured): a rate per cycle is the rate over it
  std::printf("  \"sm_clock_ghz\": {\"mma_sync_f16\": %.4f, \"mma_sync_bf16\": %.4f, \"ex2\": %.4f, \"fp32_fma\": %.4f, "
              "\"smem_read\": %.4f, \"barrier_4_warps\": %.4f, \"barrier_8_warps\": %.4f},\n",
              ghz_f16, ghz_bf16, ghz_ex2, ghz_fma, ghz_smem, ghz_bar4, ghz_bar8);
  std::printf("  \"launch_us\": %.3f\n", t_launch * 1e3 / launches);
  std::printf("}\n");
  return 0;
}
