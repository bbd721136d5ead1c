// The counting model against values derived by hand (docs/model.md "Worked example").
#include <doctest/doctest.h>

#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "../../common/config_helpers.hpp"

using namespace flashlab;

namespace {

Counters run(Algo a, Mask m = {}, Dtype t = Dtype::fp32, std::int64_t n = 1024) {
  Config c;
  c.algo = a;
  c.n_q = c.n_k = n;
  c.d = 64;
  c.b_r = c.b_c = 64;
  c.dtype = t;
  c.mask = m;
  return count(resolve(c));
}

}  // namespace

// docs/model.md "Worked example": N = 1024, d = 64, B_r = B_c = 64, no
// mask, in elements. fp32 makes every element 4 bytes, statistics included, so bytes / 4 = elements.
TEST_CASE("worked example: V2 reads 2,162,688 and writes 66,560 elements") {
  const Counters k = run(Algo::v2);
  CHECK(k.cost.read_bytes() == 2'162'688ull * 4);
  CHECK(k.cost.write_bytes() == 66'560ull * 4);
  // by tensor: Q once (N d), K and V once per tile (T_r * N d each), O (N d) and L (N) once
  CHECK(k.cost.bytes(Tensor::Q, Dir::read) == 1024ull * 64 * 4);
  CHECK(k.cost.bytes(Tensor::K, Dir::read) == 16ull * 1024 * 64 * 4);
  CHECK(k.cost.bytes(Tensor::V, Dir::read) == 16ull * 1024 * 64 * 4);
  CHECK(k.cost.bytes(Tensor::O, Dir::write) == 1024ull * 64 * 4);
  CHECK(k.cost.bytes(Tensor::L, Dir::write) == 1024ull * 4);
}

TEST_CASE("worked example: V1 reads 2,260,992 and writes 1,081,344 + 67,584 elements") {
  const Counters k = run(Algo::v1);
  CHECK(k.cost.read_bytes() == 2'260'992ull * 4);
  CHECK(k.cost.write_bytes() == (1'081'344ull + 67'584ull) * 4);
  // the loop writes O_i, l_i, m_i on each of the 256 tiles; line 2 writes O, l, m once more
  CHECK(k.cost.bytes(Tensor::O, Dir::write) == (256ull * 64 * 64 + 1024ull * 64) * 4);
  CHECK(k.cost.bytes(Tensor::l, Dir::write) == (256ull * 64 + 1024) * 4);
}

TEST_CASE("worked example: standard reads 2,293,760 and writes 2,162,688 elements") {
  const Counters k = run(Algo::standard);
  CHECK(k.cost.read_bytes() == 2'293'760ull * 4);
  CHECK(k.cost.write_bytes() == 2'162'688ull * 4);
}

TEST_CASE("cases R6: V2 with top-left causal visits 136 of 256 tiles and reads 1,179,648 elements") {
  const Counters k = run(Algo::v2, Mask{MaskKind::causal_tl, 0, 0});
  CHECK(k.tiles.total == 256);
  CHECK(k.tiles.visited == 136);
  CHECK(k.cost.read_bytes() == 1'179'648ull * 4);
}

// Non-matmul ops, derived per tile from the algorithms' equations (docs/model.md) and summed by
// hand here for N = 1024, d = 64, B = 64, no mask: 256 full 64 x 64 tiles, 16 Q blocks.
TEST_CASE("ops and FLOPs of V2 and V1 on the worked example, by kind") {
  const std::uint64_t r = 64, c = 64, d = 64, tiles = 256, blocks = 16, N = 1024;
  const Counters v2 = run(Algo::v2);
  const Counters v1 = run(Algo::v1);
  // matmul FLOPs: 4 r c d per visited tile (QK^T and PV) = 4 N^2 d
  CHECK(v2.cost.flops == 4 * N * N * d);
  CHECK(v1.cost.flops == 4 * N * N * d);
  // V2 per tile: scale r c mul; softmax r c max, r c + r sub, r c + r exp, r mul, r c add;
  // O update r d mul, r d add. Per Q block: r d div, r log, r add.
  CHECK(v2.cost.op(OpKind::mul) == tiles * (r * c + r + r * d));
  CHECK(v2.cost.op(OpKind::max) == tiles * r * c);
  CHECK(v2.cost.op(OpKind::sub) == tiles * (r * c + r));
  CHECK(v2.cost.op(OpKind::exp) == tiles * (r * c + r));
  CHECK(v2.cost.op(OpKind::add) == tiles * (r * c + r * d) + blocks * r);
  CHECK(v2.cost.op(OpKind::div) == blocks * r * d);
  CHECK(v2.cost.op(OpKind::log) == blocks * r);
  // V1 per tile: scale r c mul; rowmax r(c-1) + r max; r c + 2r sub; r c + 2r exp; r(c-1) + r add
  // (rowsum, l_new); 2r mul (l_new) + r mul (l e^(m-m_new)) + 2 r d mul; 2 r d div; r d add.
  CHECK(v1.cost.op(OpKind::mul) == tiles * (r * c + 3 * r + 2 * r * d));
  CHECK(v1.cost.op(OpKind::max) == tiles * r * c);
  CHECK(v1.cost.op(OpKind::sub) == tiles * (r * c + 2 * r));
  CHECK(v1.cost.op(OpKind::exp) == tiles * (r * c + 2 * r));
  CHECK(v1.cost.op(OpKind::add) == tiles * (r * c + r * d));
  CHECK(v1.cost.op(OpKind::div) == tiles * 2 * r * d);
  CHECK(v1.cost.op(OpKind::log) == 0);
}

TEST_CASE("per step, on every O element, V1 does one mul and two div more than V2") {
  // On one tile with T_c = 1 (a single step per Q block) the difference per O element is exactly
  // the design's: mul differs by r d + 2 r (1 per element, 2 per row), div by 2 r d before V2's
  // final divide (r d), which happens once per block, not per step.
  const std::uint64_t N = 256, d = 64;
  Config c;
  c.n_q = c.n_k = N;
  c.d = d;
  c.b_r = c.b_c = 256;
  c.dtype = Dtype::fp32;
  c.sram_bytes = 1 << 22;
  c.algo = Algo::v1;
  const Counters v1 = count(resolve(c));
  c.algo = Algo::v2;
  const Counters v2 = count(resolve(c));
  CHECK(v1.cost.op(OpKind::mul) - v2.cost.op(OpKind::mul) == N * d + 2 * N);
  CHECK(v1.cost.op(OpKind::div) == 2 * N * d);
  CHECK(v2.cost.op(OpKind::div) == N * d);
}

TEST_CASE("standard attention: ops of Algorithm 0 and the mask does not change traffic") {
  const Counters none = run(Algo::standard);
  const Counters causal = run(Algo::standard, Mask{MaskKind::causal_tl, 0, 0});
  CHECK(none.cost.read_bytes() == causal.cost.read_bytes());
  CHECK(none.cost.write_bytes() == causal.cost.write_bytes());
  const std::uint64_t N = 1024, d = 64;
  CHECK(none.cost.flops == 4 * N * N * d);
  CHECK(none.cost.op(OpKind::exp) == N * N);
  CHECK(none.cost.op(OpKind::div) == N * N);
  CHECK(none.cost.op(OpKind::max) == N * (N - 1));
  CHECK(none.cost.op(OpKind::mul) == N * N);  // the scale
}

TEST_CASE("cases R4: ragged causal bottom-right, N_q = 100, N_k = 128, B_r = 64, B_c = 32") {
  Config c = test::small(Algo::v2, 100, 128, 16, 64, 32, Mask{MaskKind::causal_br, 0, 0});
  const Counters k = count(resolve(c));
  // Q block 0 (rows 0-63) sees keys up to 63 + 28 = 91: K/V blocks 0-2 (3 tiles); block 1 (rows
  // 64-99) sees keys up to 127: blocks 0-3 (4 tiles). 7 visited of 8.
  CHECK(k.tiles.total == 8);
  CHECK(k.tiles.visited == 7);
  CHECK(k.tiles.skipped == 1);
  // fp16: Q 100 x 16 read once; K and V 32 x 16 per visited tile; O 100 x 16 and L 100 written.
  CHECK(k.cost.bytes(Tensor::Q, Dir::read) == 100 * 16 * 2);
  CHECK(k.cost.bytes(Tensor::K, Dir::read) == 7 * 32 * 16 * 2);
  CHECK(k.cost.bytes(Tensor::V, Dir::read) == 7 * 32 * 16 * 2);
  CHECK(k.cost.write_bytes() == 100 * 16 * 2 + 100 * 4);
  // the other half of R4: N = 256, B = 64, top-left causal: 10 of 16 tiles, 4 partial
  c.n_q = c.n_k = 256;
  c.b_r = c.b_c = 64;
  c.mask = Mask{MaskKind::causal_tl, 0, 0};
  const Counters t = count(resolve(c));
  CHECK(t.tiles.visited == 10);
  CHECK(t.tiles.partial == 4);
  CHECK(t.tiles.full == 6);
}

TEST_CASE("cases R2: a Q block with no visible key reads nothing and still writes O and L") {
  Config c = test::small(Algo::v2, 4, 2, 1, 2, 2, Mask{MaskKind::causal_br, 0, 0});
  c.dtype = Dtype::fp32;
  const Counters k = count(resolve(c));
  // block 0 (rows 0-1) sees no key: 0 tiles; block 1 visits tile (1, 0).
  CHECK(k.tiles.visited == 1);
  CHECK(k.cost.bytes(Tensor::Q, Dir::read) == 2 * 1 * 4);  // only Q block 1
  CHECK(k.cost.bytes(Tensor::K, Dir::read) == 2 * 1 * 4);
  CHECK(k.cost.bytes(Tensor::O, Dir::write) == 4 * 1 * 4);  // both blocks write O
  CHECK(k.cost.bytes(Tensor::L, Dir::write) == 4 * 4);
}

TEST_CASE("batch and heads multiply every count") {
  Config c;
  c.n_q = c.n_k = 1000;
  c.mask = Mask{MaskKind::causal_tl, 0, 0};
  const Counters one = count(resolve(c));
  c.batch = 3;
  c.heads = 5;
  const Counters many = count(resolve(c));
  CHECK(many.cost.read_bytes() == 15 * one.cost.read_bytes());
  CHECK(many.cost.write_bytes() == 15 * one.cost.write_bytes());
  CHECK(many.cost.flops == 15 * one.cost.flops);
  CHECK(many.tiles.visited == 15 * one.tiles.visited);
  CHECK(many.grid_blocks == 15 * one.grid_blocks);
}

TEST_CASE("SRAM peak, grid and waves on the H200 preset") {
  Config c;  // V2, fp16, N = 4096, d = 64, default tiles 128 x 128, B = 1, H = 16
  c.n_q = c.n_k = 4096;
  c.heads = 16;
  Counters k = count(resolve(c));
  // V2 keeps Q_i 128x64 and K_j, V_j 128x64 in SRAM at 2 bytes = 49,152 (S_ij in registers)
  CHECK(k.sram_peak_bytes == 3 * 128 * 64 * 2);
  CHECK(k.grid_blocks == 32 * 16);  // T_r * heads, the (32, 1, 16) grid of tests/data/pytorch_fa2_h200_ncu.md
  // resident per SM (memory/occupancy.hpp, the one rule): min(32 blocks, 64 warps / 4 = 16,
  // 233,472 B / (49,152 + 1,024 reserved) = 4, registers: the compiled kernel's 255 per thread
  // (ptxas, tests/data/gpu_time/flashlab-gpu.resources.txt), 8,192 per warp after the 256-register
  // granule, 65,536 / (8,192 x 4 warps) = 2) = 2, as the time model takes it
  CHECK(k.blocks_per_sm == 2);
  CHECK(k.waves == 2);  // ceil(512 / (132 * 2))
  // V1 as the paper writes it adds S_ij 128x128 to SRAM: 81,920 bytes, 2 per SM; one thread block
  // per (batch, head): 16 blocks, one wave
  c.algo = Algo::v1;
  k = count(resolve(c));
  CHECK(k.sram_peak_bytes == (3 * 128 * 64 + 128 * 128) * 2);
  CHECK(k.blocks_per_sm == 2);
  CHECK(k.grid_blocks == 16);
  CHECK(k.waves == 1);
}
