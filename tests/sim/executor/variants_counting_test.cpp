// The switches from V1 to V2 (docs/model.md "Variants"): HBM bytes per tensor, matmul FLOPs and
// non-matmul operations of several variants, derived by hand from the algorithm lines.
//
// Config: N_q = N_k = 8, d = 4, B_r = B_c = 4 (T_r = T_c = 2, four 4 x 4 tiles), fp16 (e_in = 2),
// one (batch, head). Sizes in bytes: a block of Q, O, K or V is 4 rows x 4 x 2 = 32; a block of
// l, m or L is 4 x 4 = 16; the whole O is 64, the whole l or m 32.
// Masks: none (every tile full) and top-left causal: tile (0, 1) is skipped (keys 4..7 > rows
// 0..3), (0, 0) and (1, 1) partial, (1, 0) full. With block skip off every tile is visited and
// masked element-wise, so causal counts equal no-mask counts; with it on 3 tiles are visited,
// and both Q blocks and both K/V blocks still have a visited tile.
//
// Per visited 4 x 4 tile (r = c = d = 4):
//   FLOPs: S = Q_i K_j^T 2rcd = 128, P~ V_j 2rcd = 128 -> 256.
//   scale (FA1 line 9 / FA2 line 8): rc = 16 mul.
//   step rescale, FA1 lines 10-12:
//     line 10: max r(c-1) = 12, sub rc = 16, exp rc = 16, add r(c-1) = 12
//     line 11: per row 1 max, 2 sub, 2 exp, 2 mul, 1 add -> max 4, sub 8, exp 8, mul 8, add 4
//     line 12: mul r + 2rd = 36, div 2rd = 32, add rd = 16
//     -> mul 16 + 8 + 36 = 60, max 16, sub 24, exp 24, add 32, div 32
//   delayed rescale, FA2 lines 9-10:
//     line 9: max rc = 16, sub rc + r = 20, exp rc + r = 20, mul r = 4, add rc = 16
//     line 10: mul rd = 16, add rd = 16
//     -> mul 16 + 4 + 16 = 36, max 16, sub 20, exp 20, add 32
//   Once per Q block with a visited tile (r = 4, d = 4):
//     q-outer delayed (FA2 lines 12-13): div rd = 16, log r = 4, add r = 4
//     q-outer step (L = m + log l only):  log 4, add 4
//     kv-outer delayed (O = diag(l)^-1 O only): div 16
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/warps/warps.hpp"
#include "../../common/config_helpers.hpp"

using namespace flashlab;

namespace {

struct Given {
  std::optional<LoopOrder> order;
  std::optional<GridKind> grid;
  std::optional<Rescale> rescale;
  std::optional<WarpSplit> split;
  std::optional<bool> block_skip;
};

Problem problem(Algo a, const Given& s, Mask m) {
  Config c = test::small(a, 8, 8, 4, 4, 4, m);
  c.order = s.order;
  c.grid = s.grid;
  c.rescale = s.rescale;
  c.split = s.split;
  c.block_skip = s.block_skip;
  return resolve(c);
}

// Expected figures: bytes by "Q r", "O w", ...; ops by kind name; everything not listed is 0.
struct Want {
  std::map<std::string, std::uint64_t> bytes;
  std::uint64_t flops = 0;
  std::map<OpKind, std::uint64_t> ops;
  std::uint64_t visited = 0;
  std::int64_t grid = 0;   // thread blocks of the first launch
  std::size_t launches = 1;
};

void check(const Counters& k, const Want& w) {
  static const std::pair<const char*, Tensor> tensors[] = {{"Q", Tensor::Q}, {"K", Tensor::K}, {"V", Tensor::V},
                                                           {"O", Tensor::O}, {"l", Tensor::l}, {"m", Tensor::m},
                                                           {"L", Tensor::L}, {"S", Tensor::S}, {"P", Tensor::P}};
  for (const auto& [name, t] : tensors)
    for (const auto& [dir, tag] : {std::pair{Dir::read, " r"}, std::pair{Dir::write, " w"}}) {
      const std::string key = std::string(name) + tag;
      CAPTURE(key);
      CHECK(k.cost.bytes(t, dir) == (w.bytes.count(key) ? w.bytes.at(key) : 0));
    }
  CHECK(k.cost.flops == w.flops);
  for (int x = 0; x < kOpKindCount; ++x) {
    const OpKind kind = OpKind(x);
    CAPTURE(to_string(kind));
    CHECK(k.cost.op(kind) == (w.ops.count(kind) ? w.ops.at(kind) : 0));
  }
  CHECK(k.tiles.visited == w.visited);
  REQUIRE(k.launches.size() == w.launches);
  CHECK(k.launches[0].grid == w.grid);
}

const Mask kNone{};
const Mask kCausal{MaskKind::causal_tl, 0, 0};

// V1 (FA1 Alg. 1), block skip off, 4 visited tiles:
//   line 2: O 64, l 32, m 32 written.   line 6: K_j, V_j once per K/V block: 2 x 32 each.
//   line 8, per tile: Q_i 32, O_i 32, l_i 16, m_i 16 read.   lines 12-13: O_i 32, l_i 16, m_i 16 written.
const Want kV1{{{"Q r", 4 * 32}, {"K r", 2 * 32}, {"V r", 2 * 32}, {"O r", 4 * 32}, {"O w", 64 + 4 * 32},
                {"l r", 4 * 16}, {"l w", 32 + 4 * 16}, {"m r", 4 * 16}, {"m w", 32 + 4 * 16}},
               4 * 256,
               {{OpKind::mul, 4 * 60}, {OpKind::max, 4 * 16}, {OpKind::sub, 4 * 24}, {OpKind::exp, 4 * 24},
                {OpKind::add, 4 * 32}, {OpKind::div, 4 * 32}},
               4, 1, 1};

}  // namespace

TEST_CASE("variants, hand-derived: V1 itself (--algo v1), no mask and causal") {
  for (const Mask& m : {kNone, kCausal}) check(count(problem(Algo::v1, {}, m)), kV1);
}

TEST_CASE("variants, hand-derived: V1 --order q-outer (O_i on chip, one thread block per head)") {
  // FA2 Alg. 1 order in one thread block: Q_i once per Q block (2 x 32), K_j, V_j per tile
  // (4 x 32 each), O_i and L_i written once per Q block (2 x 32, 2 x 16); no O, l, m round trips.
  // Ops: V1's step equations per tile, plus L = m + log l per Q block (log 4, add 4).
  const Want w{{{"Q r", 2 * 32}, {"K r", 4 * 32}, {"V r", 4 * 32}, {"O w", 2 * 32}, {"L w", 2 * 16}},
               4 * 256,
               {{OpKind::mul, 4 * 60}, {OpKind::max, 4 * 16}, {OpKind::sub, 4 * 24}, {OpKind::exp, 4 * 24},
                {OpKind::add, 4 * 32 + 2 * 4}, {OpKind::div, 4 * 32}, {OpKind::log, 2 * 4}},
               4, 1, 1};
  for (const Mask& m : {kNone, kCausal}) check(count(problem(Algo::v1, {.order = LoopOrder::q_outer}, m)), w);
}

TEST_CASE("variants, hand-derived: V1 --grid qblock (FA1's released code: O, l, m still through HBM)") {
  // Each of the 2 thread blocks initialises its own O_i, l_i, m_i (line 2 for its rows: 32, 16,
  // 16 written each, V1's 64, 32, 32 in all), holds its Q_i (read once: 2 x 32) and reads K_j,
  // V_j at every step (4 x 32 each); O_i, l_i, m_i are read and written at every step as in V1.
  Want w = kV1;
  w.bytes["Q r"] = 2 * 32;
  w.bytes["K r"] = 4 * 32;
  w.bytes["V r"] = 4 * 32;
  w.grid = 2;
  for (const Mask& m : {kNone, kCausal}) check(count(problem(Algo::v1, {.grid = GridKind::q_block}, m)), w);
}

TEST_CASE("variants, hand-derived: V1 --rescale delayed (one division at the end, a second pass over O)") {
  // The K/V loop moves V1's bytes; then a pass over the 2 Q blocks reads O_i (32) and l_i (16)
  // and writes O_i (32) once more. Ops: FA2's per-tile equations, and 16 div per Q block.
  const Want w{{{"Q r", 4 * 32}, {"K r", 2 * 32}, {"V r", 2 * 32}, {"O r", 4 * 32 + 2 * 32},
                {"O w", 64 + 4 * 32 + 2 * 32}, {"l r", 4 * 16 + 2 * 16}, {"l w", 32 + 4 * 16}, {"m r", 4 * 16},
                {"m w", 32 + 4 * 16}},
               4 * 256,
               {{OpKind::mul, 4 * 36}, {OpKind::max, 4 * 16}, {OpKind::sub, 4 * 20}, {OpKind::exp, 4 * 20},
                {OpKind::add, 4 * 32}, {OpKind::div, 2 * 16}},
               4, 1, 2};
  for (const Mask& m : {kNone, kCausal}) {
    const Counters k = count(problem(Algo::v1, {.rescale = Rescale::delayed}, m));
    check(k, w);
    CHECK(k.launches[1].name == "flash_normalize");
    CHECK(k.launches[1].grid == 1);
  }
}

TEST_CASE("variants, hand-derived: --order kv-outer --grid qblock --rescale delayed normalises on chip") {
  // As V1 --grid qblock, plus one O_i write (32) per Q block after its division (16 div each).
  const Want w{{{"Q r", 2 * 32}, {"K r", 4 * 32}, {"V r", 4 * 32}, {"O r", 4 * 32}, {"O w", 64 + 4 * 32 + 2 * 32},
                {"l r", 4 * 16}, {"l w", 32 + 4 * 16}, {"m r", 4 * 16}, {"m w", 32 + 4 * 16}},
               4 * 256,
               {{OpKind::mul, 4 * 36}, {OpKind::max, 4 * 16}, {OpKind::sub, 4 * 20}, {OpKind::exp, 4 * 20},
                {OpKind::add, 4 * 32}, {OpKind::div, 2 * 16}},
               4, 2, 1};
  check(count(problem(Algo::v1, {.grid = GridKind::q_block, .rescale = Rescale::delayed}, kNone)), w);
}

TEST_CASE("variants, hand-derived: V1 --warp-split split-q moves the same bytes, without shared-memory reductions") {
  for (const Mask& m : {kNone, kCausal}) check(count(problem(Algo::v1, {.split = WarpSplit::split_q}, m)), kV1);
  // The warp model: split-K writes 4 W r (d + 2) bytes of fp32 partials per tile (W = 4, r = 4,
  // d = 4: 384), split-Q none (docs/model.md "Warps").
  for (const auto& [split, per_tile] : {std::pair{WarpSplit::split_k, 384ull}, std::pair{WarpSplit::split_q, 0ull}}) {
    const Problem p = problem(Algo::v1, {.split = split}, kNone);
    WarpCounter warps(p);
    Executor e(p);
    e.add_observer(&warps);
    e.run();
    std::uint64_t written = 0;
    for (const WarpWork& w : warps.totals()) written += w.smem_write;
    CHECK(written == 4 * per_tile);
  }
}

TEST_CASE("variants, hand-derived: V1 --block-skip on skips tile (0, 1) under the causal mask") {
  // 3 visited tiles: Q_i, O_i, l_i, m_i per visited tile (3x); K_j, V_j for both K/V blocks.
  const Want w{{{"Q r", 3 * 32}, {"K r", 2 * 32}, {"V r", 2 * 32}, {"O r", 3 * 32}, {"O w", 64 + 3 * 32},
                {"l r", 3 * 16}, {"l w", 32 + 3 * 16}, {"m r", 3 * 16}, {"m w", 32 + 3 * 16}},
               3 * 256,
               {{OpKind::mul, 3 * 60}, {OpKind::max, 3 * 16}, {OpKind::sub, 3 * 24}, {OpKind::exp, 3 * 24},
                {OpKind::add, 3 * 32}, {OpKind::div, 3 * 32}},
               3, 1, 1};
  check(count(problem(Algo::v1, {.block_skip = true}, kCausal)), w);
  check(count(problem(Algo::v1, {.block_skip = true}, kNone)), kV1);  // nothing to skip
}

TEST_CASE("variants, hand-derived: V2 (FA2 Alg. 1), and V1 with all five of V2's switches") {
  // Q_i once per Q block (2 x 32); K_j, V_j per visited tile; O_i, L_i once per Q block.
  // Ops: FA2's per-tile equations, lines 12-13 per Q block (div 16, log 4, add 4).
  const Want none{{{"Q r", 2 * 32}, {"K r", 4 * 32}, {"V r", 4 * 32}, {"O w", 2 * 32}, {"L w", 2 * 16}},
                  4 * 256,
                  {{OpKind::mul, 4 * 36}, {OpKind::max, 4 * 16}, {OpKind::sub, 4 * 20}, {OpKind::exp, 4 * 20},
                   {OpKind::add, 4 * 32 + 2 * 4}, {OpKind::div, 2 * 16}, {OpKind::log, 2 * 4}},
                  4, 2, 1};
  const Want causal{{{"Q r", 2 * 32}, {"K r", 3 * 32}, {"V r", 3 * 32}, {"O w", 2 * 32}, {"L w", 2 * 16}},
                    3 * 256,
                    {{OpKind::mul, 3 * 36}, {OpKind::max, 3 * 16}, {OpKind::sub, 3 * 20}, {OpKind::exp, 3 * 20},
                     {OpKind::add, 3 * 32 + 2 * 4}, {OpKind::div, 2 * 16}, {OpKind::log, 2 * 4}},
                    3, 2, 1};
  const Given v2{LoopOrder::q_outer, GridKind::q_block, Rescale::delayed, WarpSplit::split_q, true};
  check(count(problem(Algo::v2, {}, kNone)), none);
  check(count(problem(Algo::v2, {}, kCausal)), causal);
  check(count(problem(Algo::v1, v2, kNone)), none);
  check(count(problem(Algo::v1, v2, kCausal)), causal);
  // and V2 with all five of V1's: V1
  const Given v1{LoopOrder::kv_outer, GridKind::head, Rescale::step, WarpSplit::split_k, false};
  check(count(problem(Algo::v2, v1, kCausal)), kV1);
}
