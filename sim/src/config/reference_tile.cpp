// reference_tile.cpp — the tile of each algorithm's reference kernel (reference_tile.hpp).
#include "flashlab/config/reference_tile.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace flashlab {
namespace {

// The head dims this project's kernels are compiled for (kernels/src/tiles.hpp kHeadDims).
bool compiled_d(std::int64_t d) { return d == 32 || d == 64 || d == 128; }

// " at d = D" where the kernels compile d; else the compiled head dims the tile is theirs at
// (`dims`, "32 and 64"), and that none is compiled at d.
std::string at_d(std::int64_t d, const char* dims) {
  return compiled_d(d) ? fmt::format(" at d = {}", d)
                       : fmt::format(" at d = {} (no kernel is compiled at d = {}: they are at d = 32, 64 and 128)", dims, d);
}

}  // namespace

ReferenceTile reference_tile(Algo a, std::int64_t d) {
  const auto [b_r, b_c] = default_blocks(d);
  switch (a) {
    case Algo::v1:
      // kernels/src/tiles.hpp: 64 x 64 x 4 needs 64 (d + 16) / 32 accumulators per thread, at most 160
      if (d <= 64) return {64, 64, 4, "flashlab's V1 kernel (kernels/src/v1.cu)", "the largest tile it compiles" + at_d(d, "32 and 64")};
      return {32, 64, 4, "flashlab's V1 kernel (kernels/src/v1.cu)",
              d <= 128 ? "the tile it compiles" + at_d(d, "128")
                       : fmt::format("its smallest tile; it compiles none at d = {}", d)};
    case Algo::v2:
      return {b_r, b_c, 4, "FA2's forward kernel (PyTorch's flash backend)", fmt::format("FA2's tile for d = {}", d)};
    case Algo::v3: {
      const Fa3Tile t = fa3_forward_tile(std::min<std::int64_t>(d, 256), MaskKind::none);
      return {t.b_r, t.b_c, int(4 * (t.b_r / 64 + 1)), "FA3's Hopper forward (hopper/, its producer and consumer warpgroups)",
              fmt::format("FA3's tile for d = {} without a mask (hopper/tile_size.h)", d)};
    }
    case Algo::standard: break;
  }
  // kernels/src/tiles.hpp: its S = scale Q K^T and O = P V kernels compile 64 x 64 x 4 and 128 x 64 x 8
  // (split-Q warps; both fit up to d = 128); the larger, as V1's, so that its time is a kernel's
  return {128, 64, 8, "three launches: S = scale Q K^T, P = softmax(S), O = P V (FA1 Algorithm 0)",
          d <= 128 ? "the largest tile its kernels compile" + at_d(d, "32, 64 and 128") + "; its HBM bytes do not depend on the tile"
                   : fmt::format("its largest tile (it compiles none at d = {}); its HBM bytes do not depend on the tile", d)};
}

bool uses_reference_tiles(const Config& c) {
  return !c.b_r && !c.b_c && !c.auto_blocks && c.pass == Pass::forward && c.kernel == Kernel::flashlab &&
         c.splits.value_or(1) == 1;
}

Config compared_config(Config c, Algo a) {
  c = with_algo(c, a, all_algos());
  if (!uses_reference_tiles(c)) return c;
  const ReferenceTile t = reference_tile(a, c.d);
  c.b_r = t.b_r;
  c.b_c = t.b_c;
  if (a != Algo::v3) c.warps = t.warps;  // V3's warps follow from its roles (B_r / 64 consumer warpgroups + producer)
  return c;
}

}  // namespace flashlab
