// event_timing.cuh — median_ms(body): the median time of `reps` calls of body (launches on the
// default stream) after `warm` untimed ones, each between two CUDA events with nothing else between
// them; for the standalone microbenchmarks of this folder (ceilings.cu, block_dispatch.cu,
// l2_per_sm.cu). Milliseconds.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "cuda_check.cuh"

inline double median_ms(const std::function<void()>& body, int reps = 15, int warm = 3) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int k = 0; k < warm; ++k) body();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int k = 0; k < reps; ++k) {
    CHECK(cudaEventRecord(a));
    body();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
