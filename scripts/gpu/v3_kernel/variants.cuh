// variants.cuh — the compiled configurations of V3's forward, by name, and how to launch one.
//   "fa3": FA3's choices (sim/src/config/fa3.cpp): warp specialization, 2 stages, pingpong, intra-
//     warpgroup overlap, persistent scheduler (static when not causal, dynamic when causal, as FA3);
//     B_r x B_c = 192 x 128 at d = 64 (FA3: 192 x 192 when not causal; 128 here to keep P in
//     registers), 128 x 176 at d = 128 (128 x 128 causal).
//   ablation, each "fa3" with one switch changed: "stages1", "no_pingpong", "no_overlap", the
//     scheduler "grid", "static" or "dynamic"; "br128": B_r 128 at d = 64 (2 consumer warpgroups);
//     "no_ws": warp specialization off, which here also forces pingpong off and the grid scheduler.
//   "fa3" at d = 64 is compiled with both B_r (192 and 128); fa3_rows (below) picks one per launch
//     from N and the mask, `v3 run ... --br R` forces one.
// Each .cu of variants_*.cu instantiates some and lists them in a registry (Entry).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "../cuda_check.cuh"
#include "v3_forward.cuh"

namespace v3 {

struct Entry {
  std::string name;
  bool bf16;
  int d;
  bool causal;
  int threads, smem, br, bc, stages;
  bool warp_spec, pingpong, intra_overlap;
  int sched;  // 0 grid, 1 static persistent, 2 dynamic persistent
  void (*prepare)();  // raises the dynamic shared-memory limit
  void (*launch)(const Params&, int grid, cudaStream_t);
  // the instrumented kernel (record.cuh), compiled only with V3_TRACE (the CMake target); nullptr
  // in the plain nvcc build (ncu_run.sh), which has no `v3 trace`
  void (*prepare_traced)();
  void (*launch_traced)(const Params&, const RecBuffers&, int grid, cudaStream_t);
};

template <class C>
void prepare_fn() {
  CHECK(cudaFuncSetAttribute(v3_forward_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
}
template <class C>
void launch_fn(const Params& p, int grid, cudaStream_t s) {
  v3_forward_kernel<C><<<grid, C::kThreads, C::kSmemBytes, s>>>(p);
}
#ifdef V3_TRACE
template <class C>
void prepare_traced_fn() {
  CHECK(cudaFuncSetAttribute(v3_forward_traced_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
}
template <class C>
void launch_traced_fn(const Params& p, const RecBuffers& rb, int grid, cudaStream_t s) {
  v3_forward_traced_kernel<C><<<grid, C::kThreads, C::kSmemBytes, s>>>(p, rb);
}
#endif
template <class C>
Entry entry(const char* name) {
#ifdef V3_TRACE
  return {name, C::kBf16, C::kD, C::kCausal, C::kThreads, C::kSmemBytes, C::kBr, C::kBc, C::kStages, C::kWarpSpec,
          C::kPingpong, C::kIntraOverlap, C::kSched, prepare_fn<C>, launch_fn<C>, prepare_traced_fn<C>, launch_traced_fn<C>};
#else
  return {name, C::kBf16, C::kD, C::kCausal, C::kThreads, C::kSmemBytes, C::kBr, C::kBc, C::kStages, C::kWarpSpec,
          C::kPingpong, C::kIntraOverlap, C::kSched, prepare_fn<C>, launch_fn<C>, nullptr, nullptr};
#endif
}

// FA3's tiles for d and the mask (see the header)
template <int D, bool kCausal, int kBrD64 = 192>
struct Tiles {
  static constexpr int kBr = D == 64 ? kBrD64 : 128;
  static constexpr int kBc = D == 64 ? 128 : (kCausal ? 128 : 176);
};

template <bool kBf16, int D, bool kCausal, int kStages = 2, bool kWs = true, bool kPp = true, bool kOv = true,
          int kSched = kCausal ? 2 : 1, int kBrD64 = 192>
using CfgOf = Cfg<kBf16, D, Tiles<D, kCausal, kBrD64>::kBr, Tiles<D, kCausal, kBrD64>::kBc, kStages, kCausal, kWs, kPp,
                  kOv, kSched>;

// The run-time launch choice of "fa3" at d = 64: B_r = 192 (3 consumer warpgroups, FA3's tile) or
// 128 (2), by the tile work each wastes. A tile of B_r rows x B_c columns costs its full B_r x B_c
// (wgmma computes padded rows and masked columns alike); the useful part is N x N scores, or
// N (N + 1) / 2 when causal. issued(B_r) sums B_r x B_c over the tiles run: ceil(N / B_r) m blocks,
// each ceil(N / B_c) key blocks, or causal ceil(min((m + 1) B_r, N) / B_c). B_r = 128 is chosen when
// the 192-row tile issues more than kBr128Gain = 1.2 times the 128-row tile's work. Why 1.2: per unit
// of issued work the 3-warpgroup tile was measured 12-22% faster on the H200 (2026-12-04, ncu,
// fp16 d 64 causal: B_r 192 666 us vs 128 686 us at N = 4,096 where 192 issues 1.091x the work:
// 1.03 x 1.091 = 1.12; 264.3 us vs 242.8 us at N = 1,024 where it issues 1.333x: 1.333 x 0.919 =
// 1.22); 192 rows then lose only where they waste more than that. With this rule: causal N = 512 and
// 1,024 (1.35x, 1.33x) take 128; causal 768 - 16k (1.02x - 1.17x) and every N without a mask
// (at most 1.125x: N = 1,024, 12.5% padded rows) keep 192. Applies to fp16 and bf16 alike.
constexpr double kBr128Gain = 1.2;
inline double fa3_issued_work(int n, int br, int bc, bool causal) {
  double s = 0;
  for (int m = 0; m * br < n; ++m) {
    const int cols = causal ? (((m + 1) * br < n) ? (m + 1) * br : n) : n;
    s += double(br) * bc * ((cols + bc - 1) / bc);
  }
  return s;
}
inline int fa3_rows(int d, bool causal, int n) {
  if (d != 64) return 128;
  const int bc = Tiles<64, false>::kBc;
  return fa3_issued_work(n, 192, bc, causal) > kBr128Gain * fa3_issued_work(n, 128, bc, causal) ? 128 : 192;
}

std::vector<Entry> variants_fa3();
std::vector<Entry> variants_ablation();

}  // namespace v3
