// reference_tile.hpp — the tile each algorithm's reference kernel runs at head dim d, and why:
// what `compare`, `explain` and the viewer's comparison put side by side when no tile is given.
//   standard: its three launches (S = scale Q K^T, P = softmax(S), O = P V; FA1 Algorithm 0) on
//             the larger of the two tiles its kernels compile, 128 x 64 x 8 (kernels/src/tiles.hpp):
//             its HBM bytes do not depend on the tile, its time does.
//   V1:       this project's V1 kernel (kernels/src/v1.cu, FA1 Algorithm 1 with split-K warps) on
//             the largest tile it compiles at d (kernels/src/tiles.hpp listed_tiles and fits):
//             64 x 64 x 4 up to d = 64, 32 x 64 x 4 above (a split-K warp keeps its B_r x d partial
//             P~V in registers). No released kernel runs FA1 Algorithm 1's K/V-outer loop.
//   V2:       FA2's forward kernel for d (default_blocks, 4 warps): what PyTorch's flash backend runs.
#pragma once

#include <cstdint>
#include <string>

#include "flashlab/config/config.hpp"

namespace flashlab {

struct ReferenceTile {
  std::int64_t b_r = 0, b_c = 0;
  int warps = 4;
  std::string kernel;  // "flashlab's V1 kernel (kernels/src/v1.cu)"
  std::string why;     // "the largest tile it compiles at d = 128"
};

/// The reference kernel's tile of `a` at head dim d (forward pass).
ReferenceTile reference_tile(Algo a, std::int64_t d);

/// Whether c leaves the tile to the reference kernels: no --br, --bc or auto, a forward pass,
/// this project's kernels (--kernel flashlab) and no split-KV.
bool uses_reference_tiles(const Config& c);

/// c as `compare` runs algorithm a: with_algo(c, a, all_algos()) (the backward form is V2's), on
/// its reference tile and warps (V3: its roles' warps) when uses_reference_tiles(c).
Config compared_config(Config c, Algo a);

}  // namespace flashlab
