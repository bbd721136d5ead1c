// dram_write.cu — the DRAM write bandwidth, measured directly. ceilings.cu measures reads and copies
// only, and the time model used to derive writes from them (2/copy = 1/read + 1/write: a copy's reads
// and writes taking turns); this measures what that identity assumes. Streaming 16-byte stores over a
// 4 GiB buffer (about 68 L2s: every store's line is written back to DRAM) from 8 blocks of 256 threads
// per SM, the layout ceilings.cu's read and copy use; and, beside it, the same stores from one 16-byte
// store per thread per loop iteration with 4 blocks of 128 threads per SM (standard attention's
// softmax writes P so, kernels/src/standard.cu store_row). Clocks as they are; CUDA events around
// each launch after an untimed one; median of 7.
//
// Then the stores of standard attention's S = QK^T kernel (kernels/src/standard.cu
// fl_standard_scores, store_s_tile): a grid of (T_r, heads) blocks of 128 threads, each storing its
// 64 rows of S one K/V block at a time, 128 bytes (64 fp16) per row, rows standard_ld(N_k) elements
// apart, with nothing else in the loop: whether the DRAM's write rate depends on that row stride
// (issue 23: the S = QK^T launches reach 2.4-3.0 TB/s of DRAM writes at N_k = 4096-16384, 0.89 TB/s at
// N_k = 3000). One row per N_k in 1024, 3000, 4096, 8192, about 1 GiB of S each.
//
// Build and run (the GPU machine): nvcc -O3 -arch=sm_90 -o /tmp/dram_write scripts/gpu/dram_write.cu && /tmp/dram_write
// Prints one JSON object: {"dram_write_gbps": ..., "dram_write_128x4_gbps": ..., "bytes": ...,
// "s_tiles": [{"n_k": ..., "ld": ..., "heads": ..., "bytes": ..., "gbps": ...}, ...]}.
// The S-tile rows were added after the committed run (tests/data/gpu_ceilings/h200_dram_write.json)
// and have not been run yet.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
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

constexpr int kTileRows = 64, kTileCols = 64;  // fp16: a tile row is 128 bytes, 8 stores of 16 bytes

/// Block (i, h) stores rows [64 i, 64 i + 64) of head h's N_q x ld fp16 matrix at `s`, 64 columns at a
/// time (T_c = ceil(n_k / 64) tiles, the last one narrower), each thread 16 bytes per store, as
/// store_s_tile's store_tile does after its SRAM stage.
__global__ void s_tile_kernel(std::uint16_t* __restrict__ s, int n_q, int n_k, int ld, float x) {
  const int i = blockIdx.x;
  const std::size_t head = blockIdx.y;
  const float4 v = make_float4(x, x + 1, x + 2, x + 3);
  for (int c0 = 0; c0 < n_k; c0 += kTileCols) {
    const int chunks = (min(kTileCols, n_k - c0) * 2 + 15) / 16;  // 16-byte chunks per row
    for (int k = threadIdx.x; k < kTileRows * chunks; k += blockDim.x) {
      const int r = i * kTileRows + k / chunks;
      if (r < n_q)
        *reinterpret_cast<float4*>(s + (head * n_q + r) * std::size_t(ld) + c0 + (k % chunks) * 8) = v;
    }
  }
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
  std::printf("{\"dram_write_gbps\": %.1f, \"dram_write_128x4_gbps\": %.1f, \"bytes\": %.0f, \"s_tiles\": [",
              bytes / (t_wide * 1e-3) / 1e9, bytes / (t_row * 1e-3) / 1e9, bytes);
  // S as standard attention's kernels lay it out: N_q = N_k rows of standard_ld(N_k) fp16 (api.hpp)
  const int n_ks[] = {1024, 3000, 4096, 8192};
  for (int x = 0; x < 4; ++x) {
    const int n_k = n_ks[x], n_q = n_k, ld = (n_k + 15) / 16 * 16;
    const std::size_t head_bytes = std::size_t(n_q) * ld * 2;
    const int heads = int(std::max<std::size_t>(1, (std::size_t(1) << 30) / head_bytes));
    const double s_bytes = double(heads) * double(n_q) * double(n_k) * 2;  // the bytes stored
    const dim3 grid(unsigned((n_q + kTileRows - 1) / kTileRows), unsigned(heads));
    const double t = median_ms([&] { s_tile_kernel<<<grid, 128>>>(reinterpret_cast<std::uint16_t*>(big), n_q, n_k, ld, 0.5f); });
    std::printf("%s{\"n_k\": %d, \"ld\": %d, \"heads\": %d, \"bytes\": %.0f, \"gbps\": %.1f}", x ? ", " : "", n_k, ld,
                heads, s_bytes, s_bytes / (t * 1e-3) / 1e9);
  }
  std::printf("]}\n");
  CHECK(cudaFree(big));
  return 0;
}
