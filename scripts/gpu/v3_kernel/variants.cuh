// variants.cuh — the compiled configurations of V3's forward, by name, and how to launch one.
//   "fa3": FA3's choices (sim/src/config/fa3.cpp): warp specialization, 2 stages, pingpong, intra-
//     warpgroup overlap, persistent scheduler (static when not causal, dynamic when causal, as FA3);
//     B_r x B_c = 192 x 128 at d = 64 (FA3: 192 x 192 when not causal; 128 here to keep P in
//     registers), 128 x 176 at d = 128 (128 x 128 causal).
//   ablation, each "fa3" with one switch changed: "stages1", "no_pingpong", "no_overlap", the
//     scheduler "grid", "static" or "dynamic"; "br128": B_r 128 at d = 64 (2 consumer warpgroups);
//     "no_ws": warp specialization off, which here also forces pingpong off and the grid scheduler.
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
};

template <class C>
void prepare_fn() {
  CHECK(cudaFuncSetAttribute(v3_forward_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
}
template <class C>
void launch_fn(const Params& p, int grid, cudaStream_t s) {
  v3_forward_kernel<C><<<grid, C::kThreads, C::kSmemBytes, s>>>(p);
}
template <class C>
Entry entry(const char* name) {
  return {name, C::kBf16, C::kD, C::kCausal, C::kThreads, C::kSmemBytes, C::kBr, C::kBc, C::kStages, C::kWarpSpec,
          C::kPingpong, C::kIntraOverlap, C::kSched, prepare_fn<C>, launch_fn<C>};
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

std::vector<Entry> variants_fa3();
std::vector<Entry> variants_ablation();

}  // namespace v3
