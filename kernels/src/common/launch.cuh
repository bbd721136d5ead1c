// launch.cuh — choosing a compiled kernel for a runtime tile shape, and launching it.
//
// Each algorithm lists its tile shapes once, as a constexpr array; `dispatch_tile` compares the
// requested shape with each entry and calls the launcher instantiated for the one that matches
// (a fold over the list, so the list is the only place where a shape is named).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <cuda_runtime.h>

#include "common/mma.cuh"
#include "flashlab/contract/error.hpp"
#include "flashlab/kernels/api.hpp"

namespace flashlab::gpu {

template <int I> using Index = std::integral_constant<int, I>;

/// Calls f(Index<I>{}) for the first I with kTiles[I] == shape; returns false when none matches.
template <const auto& kTiles, class F, std::size_t... I>
bool dispatch_tile(const TileShape& shape, F&& f, std::index_sequence<I...>) {
  return ((shape == kTiles[I] && (f(Index<int(I)>{}), true)) || ...);
}
template <const auto& kTiles, class F>
bool dispatch_tile(const TileShape& shape, F&& f) {
  return dispatch_tile<kTiles>(shape, std::forward<F>(f),
                               std::make_index_sequence<std::extent_v<std::remove_reference_t<decltype(kTiles)>>>{});
}

/// Calls f(T{}) with T the CUDA type of `e` (__half or __nv_bfloat16).
template <class F> void dispatch_elem(Elem e, F&& f) {
  if (e == Elem::fp16) f(__half{});
  else f(__nv_bfloat16{});
}

/// Calls f(Index<D>{}) for d in {32, 64, 128}; throws ConfigError otherwise.
template <class F> void dispatch_d(int d, F&& f) {
  switch (d) {
    case 32: f(Index<32>{}); return;
    case 64: f(Index<64>{}); return;
    case 128: f(Index<128>{}); return;
    default: throw ConfigError("d", std::to_string(d), "32, 64 or 128 (the head dims the CUDA kernels are built for)");
  }
}

inline void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

/// Launches `kernel` with `smem` bytes of dynamic shared memory (raising the 48 KB default limit
/// when needed) and checks the launch.
template <class... Params, class... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t stream,
                   Args&&... args) {
  if (smem > 48 * 1024)
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
               "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  kernel<<<grid, block, smem, stream>>>(std::forward<Args>(args)...);
  check_cuda(cudaGetLastError(), "kernel launch");
}

[[noreturn]] inline void unsupported_tile(const char* algo, const TileShape& s, int d) {
  throw ConfigError("br x bc x warps",
                    std::to_string(s.b_r) + " x " + std::to_string(s.b_c) + " x " + std::to_string(s.warps),
                    std::string("a tile shape compiled for the ") + algo + " kernel at d = " + std::to_string(d) +
                        " (flashlab-gpu --list-tiles shows them)");
}

}  // namespace flashlab::gpu
