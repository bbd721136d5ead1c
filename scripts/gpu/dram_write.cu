// dram_write.cu — the DRAM write bandwidth, measured directly. ceilings.cu measures reads and copies
// only, and the time model used to derive writes from them (2/copy = 1/read + 1/write: a copy's reads
// and writes taking turns); this measures what that identity assumes. Streaming 16-byte stores over a
// 4 GiB buffer (about 68 L2s: every store's line is written back to DRAM) from 8 blocks of 256 threads
// per SM, the layout ceilings.cu's read and copy use; and, beside it, the same stores from one 16-byte
// store per thread per loop iteration with 4 blocks of 128 threads per SM (standard attention's
// softmax writes P so, kernels/src/standard.cu store_row). Clocks as they are; CUDA events around
// each launch after an untimed one; median of 7.
//
// Build and run (the GPU machine): nvcc -O3 -arch=sm_90 -o /tmp/dram_write scripts/gpu/dram_write.cu && /tmp/dram_write
// Prints one JSON object: {"dram_write_gbps": ..., "dram_write_128x4_gbps": ..., "bytes": ...}.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.cuh"

namespace {

__global__ void write_kernel(float4* __restrict__ out, std::size_t n, float x) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x)
    out[k] = make_float4(x, x + 1, x + 2, x + 3);
}

template <class F>
double median_ms(F launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  launch();  // untimed
  CHECK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) {
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::size_t n = (std::size_t(4) << 30) / sizeof(float4);
  float4* big = nullptr;
  CHECK(cudaMalloc(&big, n * sizeof(float4)));
  const double bytes = double(n) * sizeof(float4);
  const double t_wide = median_ms([&] { write_kernel<<<sms * 8, 256>>>(big, n, 0.5f); });
  const double t_row = median_ms([&] { write_kernel<<<sms * 4, 128>>>(big, n, 0.25f); });
  std::printf("{\"dram_write_gbps\": %.1f, \"dram_write_128x4_gbps\": %.1f, \"bytes\": %.0f}\n",
              bytes / (t_wide * 1e-3) / 1e9, bytes / (t_row * 1e-3) / 1e9, bytes);
  CHECK(cudaFree(big));
  return 0;
}
