// The simulator's reference tiles (sim/include/flashlab/config/reference_tile.hpp: what `compare`
// runs V1 and V2 on) are tiles the kernels compile (kernels/src/tiles.hpp listed_tiles and fits):
// standard's and V1's are the largest of their lists that fit at each head dim the kernels are built for, V2's is
// FA2's, among V2's compiled tiles; the default backward tile and warps are FA2's backward kernel's,
// compiled for the backward. Built with flashlab-gpu (tiles.hpp names CUDA types).
#include <doctest/doctest.h>

#include "flashlab/config/config.hpp"
#include "flashlab/config/reference_tile.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "tiles.hpp"

namespace {

bool compiled(flashlab::Algo a, flashlab::gpu::TileShape s, int d) {
  const flashlab::gpu::TileList list = flashlab::gpu::listed_tiles(a);
  for (int k = 0; k < list.count; ++k)
    if (list.shape[k] == s) return flashlab::gpu::fits(a, s, d);
  return false;
}

flashlab::gpu::TileShape shape_of(const flashlab::ReferenceTile& t) { return {int(t.b_r), int(t.b_c), t.warps}; }

}  // namespace

TEST_CASE("reference tiles: standard's, V1's and V2's are compiled at d = 32, 64, 128, standard's and V1's the largest that fit") {
  for (int d : flashlab::gpu::kHeadDims) {
    CAPTURE(d);
    const flashlab::ReferenceTile v1 = flashlab::reference_tile(flashlab::Algo::v1, d);
    const flashlab::ReferenceTile v2 = flashlab::reference_tile(flashlab::Algo::v2, d);
    CHECK(compiled(flashlab::Algo::v1, shape_of(v1), d));
    CHECK(compiled(flashlab::Algo::v2, shape_of(v2), d));
    const flashlab::ReferenceTile st = flashlab::reference_tile(flashlab::Algo::standard, d);
    CHECK(compiled(flashlab::Algo::standard, shape_of(st), d));
    for (const auto& [a, ref] : {std::pair{flashlab::Algo::v1, v1}, std::pair{flashlab::Algo::standard, st}}) {
      const flashlab::gpu::TileList list = flashlab::gpu::listed_tiles(a);
      for (int k = 0; k < list.count; ++k)
        if (flashlab::gpu::fits(a, list.shape[k], d)) CHECK(list.shape[k].b_r * list.shape[k].b_c <= ref.b_r * ref.b_c);
    }
  }
}

TEST_CASE("--pass backward with no tile given: V2 runs FA2's backward tile, one the backward kernels compile") {
  // FA2's backward kernel traits on sm_90 as PyTorch 2.11 launches them on the H200 (launch names in
  // tests/data/gpu_time/h200.json): Flash_bwd_kernel_traits<64, 128, 128, 8, ...> and
  // <128, 64, 128, 8, ...>: d, B_r, B_c, warps
  const struct {
    int d, b_r, b_c, warps;
  } fa2[] = {{64, 128, 128, 8}, {128, 64, 128, 8}};
  for (const auto& f : fa2) {
    CAPTURE(f.d);
    flashlab::Config c;
    c.algo = flashlab::Algo::v2;
    c.pass = flashlab::Pass::backward;
    c.n_q = c.n_k = 4096;
    c.d = f.d;
    const flashlab::Problem p = flashlab::resolve(c);
    CHECK(p.tiling.b_r == f.b_r);
    CHECK(p.tiling.b_c == f.b_c);
    CHECK(p.warps == f.warps);
    const flashlab::gpu::TileShape s{f.b_r, f.b_c, f.warps};
    const flashlab::gpu::TileList list = flashlab::gpu::listed_backward_tiles(flashlab::Algo::v2);
    bool listed = false;
    for (int k = 0; k < list.count; ++k) listed = listed || list.shape[k] == s;
    CHECK(listed);
    CHECK(flashlab::gpu::fits(flashlab::Algo::v2, s, f.d, flashlab::gpu::Family::backward));
    // a tile or warp count given on the command line is kept
    c.warps = 4;
    CHECK(flashlab::resolve(c).warps == 4);
  }
}
