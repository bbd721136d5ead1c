// launch.cuh — the one dispatch chain from a launch's runtime values to a compiled kernel, and the
// launch itself.
//
//   dtype -> d -> tile shape (B_r x B_c x warps) -> plain or instrumented build
//
// Each level turns one runtime value of Args into a template argument of `Instance`, and the last
// calls the algorithm's launcher with it: Launcher::run<Instance<T, D, BR, BC, W, kRecord>>.
// The values compiled are those of tiles.hpp (kHeadDims, family_tiles, fits); a value outside
// them is a ConfigError naming the field. A new compile-time switch of the kernels is one more
// member of Instance and one more level here.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "common/mma.cuh"
#include "flashlab/contract/algo.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/kernels/api.hpp"
#include "tiles.hpp"

namespace flashlab::gpu {

/// The compile-time parameters of one compiled kernel: input element type T (__half or
/// __nv_bfloat16), head dim D, tile B_r x B_c, W warps per thread block, and whether it records
/// events and m, l snapshots (the instrumented build) or not (the plain build, for timing).
template <class T_, int D_, int BR_, int BC_, int W_, bool kRecord_>
struct Instance {
  using T = T_;
  static constexpr int D = D_, BR = BR_, BC = BC_, W = W_;
  static constexpr bool kRecord = kRecord_;
};

[[noreturn]] inline void unsupported_tile(Algo algo, const TileShape& s, int d, Family f) {
  const char* name = algo == Algo::standard ? "standard" : algo == Algo::v1 ? "v1" : "v2";
  const char* family = f == Family::backward ? " backward" : f == Family::split ? " split-KV" : "";
  throw ConfigError("br x bc x warps",
                    std::to_string(s.b_r) + " x " + std::to_string(s.b_c) + " x " + std::to_string(s.warps),
                    std::string("a tile shape compiled for the ") + name + family + " kernel at d = " +
                        std::to_string(d) + " (flashlab-gpu --list-tiles shows them)");
}

namespace dispatch_level {

// Level 4: the plain build (trace == nullptr) or the instrumented one.
template <class Launcher, class T, int D, int BR, int BC, int W>
void record(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  if (trace) Launcher::template run<Instance<T, D, BR, BC, W, true>>(a, *trace, stream);
  else Launcher::template run<Instance<T, D, BR, BC, W, false>>(a, TraceBuffers{}, stream);
}

// Level 3, one entry of the tile list: launches it if it is the requested shape (and is compiled
// at this d); returns whether it did.
template <Algo kAlgo, Family kFamily, class Launcher, class T, int D, std::size_t I>
bool tile_entry(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  constexpr TileList kList = family_tiles(kAlgo, kFamily, D);
  constexpr TileShape kShape = kList.shape[I];
  if constexpr (int(I) < kList.count && fits(kAlgo, kShape, D, kFamily)) {
    if (!(a.tile == kShape)) return false;
    record<Launcher, T, D, kShape.b_r, kShape.b_c, kShape.warps>(a, trace, stream);
    return true;
  } else {
    return false;
  }
}

// Level 3: the tile shape, one of the algorithm's list.
template <Algo kAlgo, Family kFamily, class Launcher, class T, int D, std::size_t... I>
void tile(const Args& a, const TraceBuffers* trace, cudaStream_t stream, std::index_sequence<I...>) {
  if (!(tile_entry<kAlgo, kFamily, Launcher, T, D, I>(a, trace, stream) || ...))
    unsupported_tile(kAlgo, a.tile, a.d, kFamily);
}

// Level 2, one entry of kHeadDims.
template <Algo kAlgo, Family kFamily, class Launcher, class T, std::size_t I>
bool head_dim_entry(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  constexpr int kD = kHeadDims[I];
  if (a.d != kD) return false;
  tile<kAlgo, kFamily, Launcher, T, kD>(a, trace, stream, std::make_index_sequence<TileList::kMax>{});
  return true;
}

// Level 2: the head dim d.
template <Algo kAlgo, Family kFamily, class Launcher, class T, std::size_t... I>
void head_dim(const Args& a, const TraceBuffers* trace, cudaStream_t stream, std::index_sequence<I...>) {
  if (!(head_dim_entry<kAlgo, kFamily, Launcher, T, I>(a, trace, stream) || ...))
    throw ConfigError("d", std::to_string(a.d), "32, 64 or 128 (the head dims the CUDA kernels are built for)");
}

}  // namespace dispatch_level

/// Level 1 of the chain, the input type; calls Launcher::run<Instance<...>>(a, trace, stream)
/// with the Instance that Args asks for (trace == nullptr: the plain build, which gets an empty
/// TraceBuffers). Throws ConfigError for a d or tile shape not compiled for family kFamily of kAlgo.
template <Algo kAlgo, class Launcher, Family kFamily = Family::forward>
void dispatch(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  constexpr auto kDims = std::make_index_sequence<sizeof(kHeadDims) / sizeof(kHeadDims[0])>{};
  switch (a.elem) {
    case Elem::fp16: return dispatch_level::head_dim<kAlgo, kFamily, Launcher, __half>(a, trace, stream, kDims);
    case Elem::bf16:
      return dispatch_level::head_dim<kAlgo, kFamily, Launcher, __nv_bfloat16>(a, trace, stream, kDims);
  }
  throw ConfigError("dtype", std::to_string(int(a.elem)), "fp16 or bf16");
}

inline void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

/// Launches `kernel` with `smem` bytes of dynamic shared memory (raising the 48 KB default limit
/// when needed) and checks the launch.
template <class... Params, class... KernelArgs>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t stream,
                   KernelArgs&&... args) {
  if (smem > 48 * 1024)
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
               "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  kernel<<<grid, block, smem, stream>>>(std::forward<KernelArgs>(args)...);
  check_cuda(cudaGetLastError(), "kernel launch");
}

}  // namespace flashlab::gpu
