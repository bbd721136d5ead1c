// block_dispatch.cu — how fast the GPU starts thread blocks: empty kernels of G blocks of 128
// (and 256) threads, G from 132 (one per SM) to 132 x 8,192, each launch timed alone by CUDA events
// (nothing but the launch between them), median of 9 after 3 warm-ups. The slope of the time over
// the blocks per SM is the SM's interval between two thread blocks' starts when they do nothing:
// the floor under a launch of many short blocks (standard attention's softmax runs one block per
// query row: N_q x batch x heads of them). Clocks as they are.
//
// Build and run (the GPU machine): nvcc -O3 -arch=sm_90 -I scripts/gpu -o /tmp/block_dispatch scripts/gpu/block_dispatch.cu && /tmp/block_dispatch
// Prints one JSON object: {"sms": ..., "threads_128": {"blocks_per_sm": [...], "us": [...],
// "ns_per_block_per_sm": ...}, "threads_256": {...}}.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda_check.cuh"
#include "event_timing.cuh"

namespace {

__global__ void empty_block(int* sink) {
  if (sink && threadIdx.x == 1024) *sink = 1;  // never true: the block does nothing
}

double median_us(int blocks, int threads) {
  return 1e3 * median_ms([&] { empty_block<<<blocks, threads>>>(nullptr); }, 9, 3);
}

void series(int sms, int threads, bool last) {
  const int per_sm[] = {1, 64, 256, 1024, 4096, 8192};
  std::vector<double> us;
  for (int k : per_sm) us.push_back(median_us(k * sms, threads));
  // least-squares slope of us over blocks per SM, from 64 per SM on (the line's part)
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const int n = 5;
  for (int i = 1; i <= n; ++i) sx += per_sm[i], sy += us[std::size_t(i)], sxx += double(per_sm[i]) * per_sm[i], sxy += per_sm[i] * us[std::size_t(i)];
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  std::printf("  \"threads_%d\": {\"blocks_per_sm\": [", threads);
  for (std::size_t i = 0; i < us.size(); ++i) std::printf("%s%d", i ? ", " : "", per_sm[i]);
  std::printf("], \"us\": [");
  for (std::size_t i = 0; i < us.size(); ++i) std::printf("%s%.3f", i ? ", " : "", us[i]);
  std::printf("], \"ns_per_block_per_sm\": %.2f}%s\n", slope * 1e3, last ? "" : ",");
}

}  // namespace

int main() {
  CHECK(cudaSetDevice(0));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("{\n  \"sms\": %d,\n", sms);
  series(sms, 128, false);
  series(sms, 256, true);
  std::printf("}\n");
  return 0;
}
