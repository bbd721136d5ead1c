// tma_per_sm.cu — what the bulk copy engine (TMA) moves from the L2 into one SM's shared memory: the
// round trip of one copy and the rate of copies kept in flight, with one SM loading alone and with
// every SM loading at once (each its own bytes, or all the same bytes, which Hopper's L2 request
// coalescer can merge). The V3 timeline's TMA loads (sim/src/time/v3_timeline.cpp) queue at these
// figures; l2_per_sm.cu measures the LSU's path (ld.global.cg), whose one-SM figure is not TMA's.
//
// A thread block of one thread per SM (64 for the warp's sake; thread 0 works) keeps `inflight`
// copies of `bytes` each in flight: copy k goes into buffer k mod inflight, completing that buffer's
// mbarrier (cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes, PTX ISA "Data Movement:
// cp.async.bulk"); before reusing a buffer thread 0 waits for its last copy. Sources: each thread block
// cycles through its own 4 x bytes of a buffer read once untimed first (so they are in the L2), or ("shared") every thread block through the same ones. Per config: CUDA events around one
// launch (nothing else between them), the median of 9 after 3 warm-ups; the SM clock of the last
// launch (sm_clock.cuh). ns_per_copy: the launch's time over the copies of one thread block (with
// inflight = 1: one copy's round trip, the launch's start included, amortised over `copies`).
//
// Build and run (the GPU machine):
//   nvcc -O3 -arch=sm_90a -I scripts/gpu -I scripts/gpu/v3_kernel -o /tmp/tma_per_sm scripts/gpu/tma_per_sm.cu && /tmp/tma_per_sm
// Prints one JSON object: {"sms": ..., "gpu": ..., "rows": [{"mode", "blocks", "inflight", "bytes",
// "copies", "ms", "ghz", "ns_per_copy", "gbps", "gbps_per_sm"}, ...]}.
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

constexpr int kThreads = 64;
constexpr int kMaxInflight = 4;
constexpr int kCopies = 2000;  // per thread block and launch
constexpr int kSources = 4;  // a thread block's sources: kSources x bytes, cycled through (132 SMs: <= 24 MB)

__global__ void __launch_bounds__(kThreads) tma_loads(const char* __restrict__ src, std::uint32_t bytes, int inflight,
                                                      int copies, bool shared_src, unsigned long long* clock) {
  extern __shared__ __align__(128) unsigned char buf[];
  __shared__ __align__(8) unsigned long long bars[kMaxInflight];
  clock_begin(clock);
  if (threadIdx.x == 0) {
    for (int b = 0; b < inflight; ++b) v3::mbar_init(v3::smem_addr(&bars[b]), 1);
    v3::fence_mbar_init();
    const char* base = src + (shared_src ? 0 : std::size_t(blockIdx.x) * kSources * bytes);
    for (int k = 0; k < copies; ++k) {
      const int b = k % inflight;
      const std::uint32_t bar = v3::smem_addr(&bars[b]);
      if (k >= inflight) v3::mbar_wait(bar, ((k / inflight) - 1) & 1);  // the buffer's last copy has landed
      v3::mbar_arrive_expect_tx(bar, bytes);
      bulk_load(v3::smem_addr(buf + std::size_t(b) * bytes), base + std::size_t(k % kSources) * bytes,
                bytes, bar);
    }
    for (int k = copies - inflight < 0 ? 0 : copies - inflight; k < copies; ++k)
      v3::mbar_wait(v3::smem_addr(&bars[k % inflight]), (k / inflight) & 1);
  }
  __syncthreads();
  clock_end(clock);
}

struct Config {
  const char* mode;  // "one_sm", "all_sms", "all_sms_shared"
  int inflight;
  std::uint32_t bytes;
};

}  // namespace

int main() {
  CHECK(cudaSetDevice(0));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  CHECK(cudaFuncSetAttribute(tma_loads, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxInflight * 49152));
  // 45,056 B: V3's K_j or V_j box at d = 128 (176 x 128 fp16); 16,384 B: at d = 64 (128 x 64)
  const std::vector<std::uint32_t> sizes = {256, 1024, 4096, 16384, 45056};
  std::vector<Config> configs;
  for (std::uint32_t b : sizes) configs.push_back({"one_sm", 1, b});
  for (int f : {2, 4})
    for (std::uint32_t b : {16384u, 45056u}) configs.push_back({"one_sm", f, b});
  for (const char* m : {"all_sms", "all_sms_shared"})
    for (int f : {1, 2, 4})
      for (std::uint32_t b : {16384u, 45056u}) configs.push_back({m, f, b});
  const std::size_t src_bytes = std::size_t(sms) * kSources * 45056;
  char* src = nullptr;
  CHECK(cudaMalloc(&src, src_bytes));
  CHECK(cudaMemset(src, 1, src_bytes));
  std::printf("{\"sms\": %d, \"gpu\": \"%s\", \"threads\": %d, \"sources\": %d, \"rows\": [", sms, prop.name, kThreads,
              kSources);
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const Config& x = configs[c];
    const std::string mode = x.mode;
    const int blocks = mode == "one_sm" ? 1 : sms;
    const bool shared = mode == "all_sms_shared";
    const int copies = kCopies;
    SmClock clock(blocks);
    const std::size_t smem = std::size_t(x.inflight) * x.bytes;
    const auto launch = [&] { tma_loads<<<blocks, kThreads, smem>>>(src, x.bytes, x.inflight, copies, shared, clock.device()); };
    // the sources into the L2: read once untimed
    launch();
    CHECK(cudaDeviceSynchronize());
    const double ms = median_ms(launch, 9, 3);
    const double moved = double(blocks) * copies * x.bytes;
    std::printf("%s\n {\"mode\": \"%s\", \"blocks\": %d, \"inflight\": %d, \"bytes\": %u, \"copies\": %d, \"ms\": %.6f, "
                "\"ghz\": %.4f, \"ns_per_copy\": %.2f, \"gbps\": %.2f, \"gbps_per_sm\": %.3f}",
                c ? "," : "", x.mode, blocks, x.inflight, x.bytes, copies, ms, clock.ghz(), ms * 1e6 / copies,
                moved / (ms * 1e-3) / 1e9, moved / (ms * 1e-3) / 1e9 / blocks);
  }
  std::printf("\n]}\n");
  CHECK(cudaFree(src));
  return 0;
}
