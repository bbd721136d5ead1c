// l2_per_sm.cu — the L2 read bandwidth that G SMs draw together, G = 1 to all: G thread blocks of
// 1,024 threads (one per SM: 64 KiB of shared memory each keeps a second off the SM), each thread
// with four 16-byte ld.global.cg loads in flight, over a 16 MiB buffer read once untimed first (so
// it is in the L2); CUDA events around one launch, median of 9 after 3 warm-ups. Where few SMs have
// work (a small grid: split-KV's combine, a decode step), each draws more than 1/SMs of the L2's
// bandwidth, up to what one SM's port takes. Clocks as they are.
//
// Build and run (the GPU machine): nvcc -O3 -arch=sm_90 -I scripts/gpu -o /tmp/l2_per_sm scripts/gpu/l2_per_sm.cu && /tmp/l2_per_sm
// Prints one JSON object: {"sms": ..., "blocks": [...], "gbps": [...], "gbps_per_sm": [...]}.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda_check.cuh"
#include "event_timing.cuh"

namespace {

constexpr int kThreads = 1024;
constexpr std::size_t kBytes = std::size_t(16) << 20;
constexpr int kPasses = 8;

__global__ void __launch_bounds__(kThreads) read_l2(const float4* __restrict__ in, std::size_t n, float* sink) {
  extern __shared__ float4 pad[];  // only to keep one block per SM
  float acc = 0;
  for (int p = 0; p < kPasses; ++p)
    for (std::size_t k = (blockIdx.x * std::size_t(kThreads) + threadIdx.x) * 4; k + 3 < n;
         k += std::size_t(gridDim.x) * kThreads * 4) {
      const float4 a = __ldcg(in + k), b = __ldcg(in + k + 1), c = __ldcg(in + k + 2), d = __ldcg(in + k + 3);
      acc += a.x + b.y + c.z + d.w;
    }
  if (acc == 1.2345f) sink[threadIdx.x] = acc + pad[0].x;
}


}  // namespace

int main() {
  CHECK(cudaSetDevice(0));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaFuncSetAttribute(read_l2, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
  const std::size_t n = kBytes / sizeof(float4);
  float4* buf = nullptr;
  float* sink = nullptr;
  CHECK(cudaMalloc(&buf, kBytes));
  CHECK(cudaMalloc(&sink, kThreads * sizeof(float)));
  CHECK(cudaMemset(buf, 0, kBytes));
  read_l2<<<sms, kThreads, 64 * 1024>>>(buf, n, sink);  // the buffer into the L2
  CHECK(cudaDeviceSynchronize());
  std::vector<int> blocks = {1, 2, 4, 8, 16, 33, 66, sms};
  std::vector<double> gbps;
  for (int g : blocks) gbps.push_back(double(kBytes) * kPasses / (median_ms([&] { read_l2<<<g, kThreads, 64 * 1024>>>(buf, n, sink); }, 9, 3) * 1e-3) / 1e9);
  std::printf("{\"sms\": %d, \"bytes\": %zu, \"passes\": %d, \"blocks\": [", sms, kBytes, kPasses);
  for (std::size_t i = 0; i < blocks.size(); ++i) std::printf("%s%d", i ? ", " : "", blocks[i]);
  std::printf("], \"gbps\": [");
  for (std::size_t i = 0; i < gbps.size(); ++i) std::printf("%s%.1f", i ? ", " : "", gbps[i]);
  std::printf("], \"gbps_per_sm\": [");
  for (std::size_t i = 0; i < gbps.size(); ++i) std::printf("%s%.1f", i ? ", " : "", gbps[i] / blocks[i]);
  std::printf("]}\n");
  CHECK(cudaFree(buf));
  CHECK(cudaFree(sink));
  return 0;
}
