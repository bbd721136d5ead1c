// V3's counts: FA3 keeps FA2's loop and bytes (FA3 paper §3: what changes is when each unit works),
// so on V2's tile its counts are V2's; and closed forms derived by hand.
#include <doctest/doctest.h>

#include <stdexcept>

#include "flashlab/executor/count.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "../../common/config_helpers.hpp"

using namespace flashlab;

namespace {

Config v3(std::int64_t n_q, std::int64_t n_k, std::int64_t d, std::int64_t b_r, std::int64_t b_c, Mask m = {}) {
  Config c = test::small(Algo::v3, n_q, n_k, d, b_r, b_c, m);
  c.batch = 2;
  c.heads = 3;
  return c;
}

// c as V2 runs it: the same problem and tile, V3's switches unset
Config as_v2(Config c) {
  c.algo = Algo::v2;
  c.scheduler.reset();
  c.stages.reset();
  c.intra_overlap.reset();
  return c;
}

}  // namespace

TEST_CASE("V3 on V2's tile counts V2's bytes per tensor and level, FLOPs, operations and tiles, but its TMA boxes whole") {
  // N_q = 1000, N_k = 1300 on 64 x 128 tiles: T_r = 16 (24 rows past N_q), T_c = 11 (108 past N_k).
  // V3's loads of Q, K, V are TMA boxes (Action::tma_box): the sector level counts the last block's
  // rows past N too, 64 x 2 = 128 bytes a row — Q's 24 once per head, K's and V's 108 once for each Q
  // block that visits the last K/V block (keys 1280-1299), by hand from the masks' rules (tiling.hpp):
  // none, all 16; causal top-left (c <= r), none (r <= 999); bottom-right (c <= r + 300), Q block 15
  // (rows 960-999) alone; window (100, 50) (r + 200 <= c <= r + 350), rows >= 930: Q blocks 14 and 15.
  struct Case {
    Mask mask;
    std::uint64_t last_kv_visits;
  };
  const Case cases[] = {{{}, 16}, {{MaskKind::causal_tl, 0, 0}, 0}, {{MaskKind::causal_br, 0, 0}, 1}, {{MaskKind::window, 100, 50}, 2}};
  const std::uint64_t heads = 6, row = 64 * 2;
  for (const Case& k : cases)
    for (TileScheduler s : {TileScheduler::grid, TileScheduler::persistent})
      for (int stages : {1, 3}) {
        CAPTURE(to_string(k.mask));
        Config c = v3(1000, 1300, 64, 64, 128, k.mask);
        c.scheduler = s;
        c.stages = stages;
        c.intra_overlap = stages == 1;
        const Counters a = count(resolve(c), true), b = count(resolve(as_v2(c)), true);
        CHECK(a.cost.hbm == b.cost.hbm);
        TensorBytes sectors = b.levels[int(Memory::sector)];
        sectors[int(Tensor::Q)][int(Dir::read)] += heads * 24 * row;
        sectors[int(Tensor::K)][int(Dir::read)] += heads * k.last_kv_visits * 108 * row;
        sectors[int(Tensor::V)][int(Dir::read)] += heads * k.last_kv_visits * 108 * row;
        CHECK(a.levels[int(Memory::sector)] == sectors);
        CHECK(a.levels[int(Memory::sram)] == b.levels[int(Memory::sram)]);
        CHECK(a.levels[int(Memory::registers)] == b.levels[int(Memory::registers)]);
        CHECK(a.cost.flops == b.cost.flops);
        CHECK(a.cost.ops == b.cost.ops);
        CHECK(a.tiles.visited == b.tiles.visited);
        CHECK(a.tiles.skipped == b.tiles.skipped);
      }
  // N a multiple of both tiles: no partial box, V3's sector level is V2's
  const Config c = v3(1024, 1280, 64, 64, 128);
  CHECK(count(resolve(c), true).levels[int(Memory::sector)] == count(resolve(as_v2(c)), true).levels[int(Memory::sector)]);
}

TEST_CASE("V3 without a mask, FA3's d = 128 tile (128 x 176): Q read once, K and V T_r times, closed forms") {
  // N_q = 1000, N_k = 1300: T_r = ceil(1000 / 128) = 8, T_c = ceil(1300 / 176) = 8; fp16; 6 heads
  const Problem p = resolve(v3(1000, 1300, 128, 128, 176));
  REQUIRE(p.tiling.t_r() == 8);
  REQUIRE(p.tiling.t_c() == 8);
  const Counters k = count(p);
  const std::uint64_t heads = 6, e = 2;
  CHECK(k.cost.bytes(Tensor::Q, Dir::read) == heads * 1000 * 128 * e);
  CHECK(k.cost.bytes(Tensor::K, Dir::read) == heads * 8 * 1300 * 128 * e);
  CHECK(k.cost.bytes(Tensor::V, Dir::read) == heads * 8 * 1300 * 128 * e);
  CHECK(k.cost.bytes(Tensor::O, Dir::write) == heads * 1000 * 128 * e);
  CHECK(k.cost.bytes(Tensor::L, Dir::write) == heads * 1000 * 4);
  CHECK(k.cost.read_bytes() == heads * (1000 + 2 * 8 * 1300) * 128 * e);
  // QK^T and PV: 2 N_q N_k d each
  CHECK(k.cost.flops == heads * 4ull * 1000 * 1300 * 128);
  // FA2 line 9 per tile: exp(S - m_new) per score and exp(m_old - m_new) per row: N_q N_k + T_c N_q
  CHECK(k.cost.ops[int(OpKind::exp)] == heads * (1000ull * 1300 + 8 * 1000));
  CHECK(k.cost.ops[int(OpKind::log)] == heads * 1000);  // L = m + log(l), once per row
  CHECK(k.tiles.visited == heads * 64);
  // SRAM: Q_i and 2 stages of K_j and V_j, P~ in registers: (128 + 2 x 2 x 176) x 128 x 2 bytes
  CHECK(k.sram_peak_bytes == (128 + 4 * 176) * 128 * 2);
  // the persistent scheduler: one thread block per SM of the H200 (132)
  CHECK(k.grid_blocks == 132);
  Config grid = v3(1000, 1300, 128, 128, 176);
  grid.scheduler = TileScheduler::grid;
  CHECK(count(resolve(grid)).grid_blocks == heads * 8);
}

TEST_CASE("V3 causal, FA3's d = 64 causal tile (192 x 128), N = 1536: 56 visited tiles") {
  // tile (i, j) is visited when its first key j 128 <= its last query 192 i + 191: for i = 0 .. 7,
  // j <= 1, 2, 4, 5, 7, 8, 10, 11, i.e. 2 + 3 + 5 + 6 + 8 + 9 + 11 + 12 = 56 of the 8 x 12
  Config c = test::small(Algo::v3, 1536, 1536, 64, 192, 128, Mask{MaskKind::causal_tl, 0, 0});
  const Problem p = resolve(c);
  CHECK(fa3_forward_tile(64, MaskKind::causal_tl).b_r == 192);
  const Counters k = count(p);
  CHECK(k.tiles.visited == 56);
  CHECK(k.tiles.skipped == 96 - 56);
  CHECK(k.cost.bytes(Tensor::Q, Dir::read) == 1536ull * 64 * 2);
  CHECK(k.cost.bytes(Tensor::K, Dir::read) == 56ull * 128 * 64 * 2);
  CHECK(k.cost.flops == 56ull * 4 * 192 * 128 * 64);  // masked scores inside a partial tile still computed
  // d = 64 without a mask: FA3 keeps P~ in SRAM (MmaPV_is_RS false), 192 x 192: Q, 2 x (K, V), P~
  const Problem none = resolve(test::small(Algo::v3, 1536, 1536, 64, 192, 192));
  CHECK(count(none).sram_peak_bytes == (192 * 64 + 4 * 192 * 64 + 192 * 192) * 2);
  // ... a choice of its 192 x 192 tile, not of the mask (use_blockN_128): 192 x 128 without a mask, the
  // staged kernel's tile (scripts/gpu/v3_kernel, RS at every tile), keeps P~ in registers as the causal
  // tile does: Q, 2 x (K, V), nothing for P~
  const Problem none_128 = resolve(test::small(Algo::v3, 1536, 1536, 64, 192, 128));
  CHECK(count(none_128).sram_peak_bytes == (192 * 64 + 4 * 128 * 64) * 2);
  CHECK(count(none_128).sram_peak_bytes == k.sram_peak_bytes);
}

TEST_CASE("V3's schedule is data: warp roles, a ring of `stages` K/V buffers, deferred GEMM1 with overlap") {
  Config c = test::small(Algo::v3, 512, 512, 128, 128, 128);
  const Schedule s = make_schedule(resolve(c));
  REQUIRE(s.launches.size() == 1);
  const Launch& l = s.launches[0];
  CHECK(l.name == "v3_forward");
  CHECK(l.persistent);
  CHECK(has_warp_roles(s));
  CHECK(!has_warp_roles(make_schedule(resolve(test::small(Algo::v2, 512, 512, 128, 128, 128)))));
  int deferred = 0, producer_loads = 0;
  for (const Action& a : l.body) {
    deferred += a.deferred;
    producer_loads += a.op == Op::load && a.role == Role::producer;
  }
  CHECK(producer_loads == 2);  // K_j, V_j
  CHECK(deferred == 5);        // wait V full, GEMM1, commit, wait GEMM1, release V
  c.intra_overlap = false;
  c.warp_specialize = false;
  const Launch l2 = make_schedule(resolve(c)).launches[0];
  for (const Action& a : l2.body) {
    CHECK(!a.deferred);
    CHECK(a.role != Role::producer);
  }
}

TEST_CASE("a TMA box is V3's loads of Q, K and V, and only a load of a Q-block or K/V-block region") {
  Schedule s = make_schedule(resolve(v3(1000, 1300, 64, 64, 128)));
  int boxes = 0;
  for (const Action& a : s.launches[0].outer_begin) boxes += a.tma_box && a.op == Op::load && a.tensor == Tensor::Q;
  for (const Action& a : s.launches[0].body)
    boxes += a.tma_box && a.op == Op::load && (a.tensor == Tensor::K || a.tensor == Tensor::V);
  CHECK(boxes == 3);
  CHECK_NOTHROW(check_schedule(s));
  for (Action& a : s.launches[0].outer_end)
    if (a.op == Op::store && a.tensor == Tensor::O) a.tma_box = true;  // O's store: not a TMA box here
  CHECK_THROWS_WITH_AS(check_schedule(s), doctest::Contains("a TMA box needs a load"), std::logic_error);
}
