// cuda_check.cuh — CHECK(call) for the standalone microbenchmarks of this folder (ceilings.cu,
// latency.cu, dram_write.cu, wgmma_ceiling.cu): a CUDA runtime call that fails prints the call, the
// file and line and CUDA's message on stderr, and the program exits with status 1.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                                 \
  do {                                                                                              \
    cudaError_t err_ = (call);                                                                      \
    if (err_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)
