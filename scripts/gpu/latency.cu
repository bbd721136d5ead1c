// latency.cu — the round trip of one dependent global load on the GPU, the quantity the time
// model's lambda stands for (docs/model.md "Time model", "The three constants"): one thread chases
// pointers through a random cyclic permutation of 128-byte lines, so that each load's address comes
// from the one before; the time per hop is the latency. Over a 8 MiB buffer (in the L2 after a first
// pass) it is an L2 hit's round trip; over 1 GiB (about 17 times the L2) a DRAM access's. Clocks as
// they are; CUDA events around one launch of 2^20 hops after an untimed pass; median of 5.
// The same chase through shared memory (a random cyclic permutation of 8,192 4-byte indices, 32 KiB,
// one thread, ld.shared each from the last) gives a shared-memory load's latency, the wait of a
// dependent LDS (split-K's reductions: a store, a barrier, then loads whose values the next step
// needs), timed in SM cycles by clock64() inside the kernel and in ns by the events.
//
// Build and run (the GPU machine): nvcc -O3 -arch=sm_90 -o /tmp/latency scripts/gpu/latency.cu && /tmp/latency
// Prints one JSON object: {"l2_hit_ns": ..., "dram_256MiB_ns": ..., "dram_ns": ..., "smem_ns": ...,
// "smem_cycles": ..., "hops": ...} (256 MiB: the same over a buffer of about 4 L2s, fewer TLB misses than 1 GiB).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "cuda_check.cuh"

namespace {

constexpr std::size_t kLine = 128;  // bytes between the pointers: one L2 line each
constexpr int kHops = 1 << 20;

__global__ void chase(const std::uint64_t* __restrict__ next, int hops, std::uint64_t* sink) {
  std::uint64_t p = 0;
  for (int k = 0; k < hops; ++k) p = next[p];  // ld.global: each address from the last load
  *sink = p;
}

constexpr int kSmemEntries = 8192;  // 32 KiB of 4-byte indices

// The chase in shared memory: the permutation copied in by the block, then one thread's hops; the
// cycles of the hops alone (clock64 around the loop) to cycles[0].
__global__ void smem_chase(const std::uint32_t* __restrict__ perm, int hops, std::uint64_t* sink, long long* cycles) {
  __shared__ std::uint32_t next[kSmemEntries];
  for (int k = threadIdx.x; k < kSmemEntries; k += blockDim.x) next[k] = perm[k];
  __syncthreads();
  if (threadIdx.x != 0) return;
  std::uint32_t p = 0;
  const long long t0 = clock64();
  for (int k = 0; k < hops; ++k) p = next[p];  // ld.shared: each address from the last load
  const long long t1 = clock64();
  *sink = p;
  *cycles = t1 - t0;
}

struct SmemLatency {
  double ns, cycles;
};

SmemLatency smem_latency() {
  std::vector<std::uint32_t> order(kSmemEntries), next(kSmemEntries);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937_64(42));
  for (int k = 0; k < kSmemEntries; ++k) next[order[std::size_t(k)]] = order[std::size_t((k + 1) % kSmemEntries)];
  std::uint32_t* d_next = nullptr;
  std::uint64_t* sink = nullptr;
  long long* cycles = nullptr;
  CHECK(cudaMalloc(&d_next, next.size() * sizeof(std::uint32_t)));
  CHECK(cudaMalloc(&sink, sizeof(std::uint64_t)));
  CHECK(cudaMalloc(&cycles, sizeof(long long)));
  CHECK(cudaMemcpy(d_next, next.data(), next.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  smem_chase<<<1, 128>>>(d_next, kHops, sink, cycles);  // untimed
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<double> ns, cyc;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(a));
    smem_chase<<<1, 128>>>(d_next, kHops, sink, cycles);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    long long c = 0;
    CHECK(cudaMemcpy(&c, cycles, sizeof(c), cudaMemcpyDeviceToHost));
    ns.push_back(ms * 1e6 / kHops);
    cyc.push_back(double(c) / kHops);
  }
  CHECK(cudaFree(d_next));
  CHECK(cudaFree(sink));
  CHECK(cudaFree(cycles));
  std::sort(ns.begin(), ns.end());
  std::sort(cyc.begin(), cyc.end());
  return {ns[ns.size() / 2], cyc[cyc.size() / 2]};
}

double ns_per_hop(std::size_t bytes) {
  const std::size_t lines = bytes / kLine, stride = kLine / sizeof(std::uint64_t);
  std::vector<std::uint64_t> order(lines);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937_64(42));
  std::vector<std::uint64_t> next(lines * stride, 0);
  for (std::size_t k = 0; k < lines; ++k) next[order[k] * stride] = order[(k + 1) % lines] * stride;
  std::uint64_t *d_next = nullptr, *sink = nullptr;
  CHECK(cudaMalloc(&d_next, next.size() * sizeof(std::uint64_t)));
  CHECK(cudaMalloc(&sink, sizeof(std::uint64_t)));
  CHECK(cudaMemcpy(d_next, next.data(), next.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice));
  const int hops = int(std::min<std::size_t>(kHops, 4 * lines));
  chase<<<1, 1>>>(d_next, hops, sink);  // untimed: the L2-sized buffer is resident after it
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(a));
    chase<<<1, 1>>>(d_next, hops, sink);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1e6 / hops);
  }
  CHECK(cudaFree(d_next));
  CHECK(cudaFree(sink));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  CHECK(cudaSetDevice(0));
  const double l2 = ns_per_hop(std::size_t(8) << 20);
  const double dram256 = ns_per_hop(std::size_t(256) << 20);
  const double dram = ns_per_hop(std::size_t(1) << 30);
  const SmemLatency smem = smem_latency();
  std::printf("{\"l2_hit_ns\": %.1f, \"dram_256MiB_ns\": %.1f, \"dram_ns\": %.1f, \"smem_ns\": %.2f, "
              "\"smem_cycles\": %.2f, \"hops\": %d}\n",
              l2, dram256, dram, smem.ns, smem.cycles, kHops);
  return 0;
}
