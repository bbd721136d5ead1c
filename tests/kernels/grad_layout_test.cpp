// The time model's backward warp layout (sim/include/flashlab/time/time_model.hpp grad_layout) is the
// compiled backward kernels' (kernels/src/tiles.hpp backward_dq_row_groups and backward_key_groups;
// V1's query chunk of kernels/src/common/grad_tile.cuh GradShape, written out below per tile as that
// file's rule gives it), for every backward tile the kernels compile; FA2's is its launch names' traits.
#include <doctest/doctest.h>

#include <string>

#include "flashlab/config/config.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/time/time_model.hpp"
#include "tiles.hpp"

namespace {

flashlab::Problem problem(flashlab::Algo a, flashlab::gpu::TileShape s, int d) {
  flashlab::Config c;
  c.algo = a;
  c.pass = flashlab::Pass::backward;
  c.d = d;
  c.n_q = c.n_k = 1024;
  c.b_r = s.b_r;
  c.b_c = s.b_c;
  c.warps = s.warps;
  return flashlab::resolve(c);
}

}  // namespace

TEST_CASE("time model: the backward warp layout of every compiled backward tile is the kernel's") {
  int checked = 0;
  for (flashlab::Algo a : {flashlab::Algo::v1, flashlab::Algo::v2})
    for (int d : flashlab::gpu::kHeadDims) {
      const flashlab::gpu::TileList list = flashlab::gpu::listed_backward_tiles(a);
      for (int k = 0; k < list.count; ++k) {
        const flashlab::gpu::TileShape s = list.shape[k];
        if (!flashlab::gpu::fits(a, s, d, flashlab::gpu::Family::backward)) continue;
        CAPTURE(std::string(flashlab::to_string(a)));
        CAPTURE(d);
        CAPTURE(s.b_r);
        CAPTURE(s.b_c);
        CAPTURE(s.warps);
        const flashlab::GradLayout g = flashlab::grad_layout(problem(a, s, d));
        CHECK(g.dq_rows == flashlab::gpu::backward_dq_row_groups(s, d));
        if (a == flashlab::Algo::v2) {
          // grad_grid.cuh GridShape: groups of 32 keys, S^T in one pass over B_r, P^T and dS^T in SRAM
          const int key_groups = flashlab::gpu::backward_key_groups(s, d);
          CHECK(key_groups == s.b_c / 32);
          CHECK(g.kv_rows == key_groups);
          CHECK(g.s_rows == s.warps / key_groups);
          CHECK(g.q_chunk == s.b_r);
          CHECK(g.p_in_sram);
        } else {
          CHECK(g.s_rows == 1);  // every warp owns 16 keys of S^T
          CHECK(s.b_c == 16 * s.warps);
          CHECK(g.kv_rows == s.warps);  // and of dK_j, dV_j
          CHECK(!g.p_in_sram);          // P^T, dS^T in registers for dV, dK
          // GradShape's kQC in V1's kernel: 16 queries up to d = 64, at d = 128 32 where a warp's dQ
          // block is at most 32 columns wide, else 16; never more than B_r
          const int dq_cols = d / (s.warps / flashlab::gpu::backward_dq_row_groups(s, d));
          const int chunk = d <= 64 ? 16 : dq_cols <= 32 ? 32 : 16;
          CHECK(g.q_chunk == std::min(s.b_r, chunk));
        }
        ++checked;
      }
    }
  CHECK(checked >= 6);
}

TEST_CASE("time model: FA2's backward warp layout is its launch names' Flash_bwd_kernel_traits") {
  // Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 4, 4> and <128, 64, 128, 8, 2, 4, 2> (tests/data/gpu_time/h200.json)
  for (auto [d, m_sdp, n_dkv, m_dq] : {std::tuple{64, 4, 4, 4}, std::tuple{128, 2, 4, 2}}) {
    CAPTURE(d);
    flashlab::Config c;
    c.kernel = flashlab::Kernel::fa2;
    c.algo = flashlab::Algo::v2;
    c.pass = flashlab::Pass::backward;
    c.d = d;
    c.n_q = c.n_k = 1024;
    const flashlab::GradLayout g = flashlab::grad_layout(flashlab::resolve(c));
    CHECK(g.s_rows == m_sdp);
    CHECK(g.kv_rows == n_dkv);
    CHECK(g.dq_rows == m_dq);
    CHECK(g.p_in_sram);
  }
}
