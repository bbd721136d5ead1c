// sm_clock.cuh — the SM clock a timed kernel ran at, for the microbenchmarks of this folder
// (ceilings.cu, wgmma_ceiling.cu). The H200 lowers its SM clock under its power limit (the V3 kernel's
// launches ran at 1.65-1.79 GHz against a 1.98 GHz boost clock: docs/model.md, "V3 in SM cycles"), so a
// rate in operations per second is a rate per cycle times the clock it ran at, and the time model
// needs both. Thread 0 of each thread block stamps clock64() (its SM's cycle counter) and %globaltimer
// (PTX ISA: a global timer in nanoseconds) when it starts and when it ends; the clock is the cycles
// over the nanoseconds between the two stamps, the median over the thread blocks of the last launch.
//
//   SmClock clock(blocks);                     // 4 stamps per thread block, on the device
//   kernel<<<blocks, threads>>>(..., clock.device());
//   clock_begin(stamps) / clock_end(stamps)    // in the kernel, at its start and before its end
//   clock.ghz()                                // GHz; -1 when no block left two ordered stamps
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda_check.cuh"

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void clock_begin(unsigned long long* stamps) {
  if (stamps == nullptr || threadIdx.x != 0) return;
  stamps[4 * blockIdx.x] = static_cast<unsigned long long>(clock64());
  stamps[4 * blockIdx.x + 1] = global_ns();
}

__device__ __forceinline__ void clock_end(unsigned long long* stamps) {
  if (stamps == nullptr || threadIdx.x != 0) return;
  stamps[4 * blockIdx.x + 2] = static_cast<unsigned long long>(clock64());
  stamps[4 * blockIdx.x + 3] = global_ns();
}

class SmClock {
 public:
  explicit SmClock(int blocks) : blocks_(blocks) {
    CHECK(cudaMalloc(&stamps_, sizeof(unsigned long long) * 4 * blocks_));
    CHECK(cudaMemset(stamps_, 0, sizeof(unsigned long long) * 4 * blocks_));
  }
  SmClock(const SmClock&) = delete;
  SmClock& operator=(const SmClock&) = delete;
  ~SmClock() { cudaFree(stamps_); }

  unsigned long long* device() const { return stamps_; }

  /// The median over the thread blocks of cycles / nanoseconds between each one's two stamps (GHz);
  /// -1 when none has an end after its start (the kernel did not run, or ran under a microsecond).
  double ghz() const {
    std::vector<unsigned long long> h(std::size_t(4) * blocks_);
    CHECK(cudaMemcpy(h.data(), stamps_, sizeof(unsigned long long) * h.size(), cudaMemcpyDeviceToHost));
    std::vector<double> per_block;
    for (int b = 0; b < blocks_; ++b) {
      const unsigned long long* s = &h[std::size_t(4) * b];
      if (s[2] > s[0] && s[3] > s[1]) per_block.push_back(double(s[2] - s[0]) / double(s[3] - s[1]));
    }
    if (per_block.empty()) return -1;
    std::sort(per_block.begin(), per_block.end());
    return per_block[per_block.size() / 2];
  }

 private:
  int blocks_;
  unsigned long long* stamps_ = nullptr;
};
