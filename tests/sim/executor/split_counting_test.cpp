// Split-KV's counts (docs/model.md "Split-KV") against closed forms derived from the algorithm
// (each split walks its own K/V blocks, every split writes its partial O and L, the combine reads
// them all) and against Nsight Compute's request bytes of PyTorch's FA2 split-KV kernels on the
// H200 (tests/data/pytorch_fa2_h200_ncu.md, measured, not derived from this code).
#include <doctest/doctest.h>

#include <cmath>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"

using namespace flashlab;

namespace {

Config split_config(std::int64_t n, std::int64_t d, std::int64_t heads, std::int64_t splits, Mask m = {}) {
  Config c;
  c.n_q = c.n_k = n;
  c.d = d;
  c.heads = heads;
  c.splits = splits;
  c.mask = m;
  return c;
}

const Mask kCausal{MaskKind::causal_tl, 0, 0};

// Nsight Compute prints MB with three decimals: equal to the nearest kilobyte.
bool same_mb(std::uint64_t bytes, double mb) { return std::abs(double(bytes) - mb * 1e6) <= 500; }

}  // namespace

// FA2's num_splits_heuristic, values worked by hand from its rule (config.hpp split_heuristic).
TEST_CASE("split_heuristic: FA2's rule, worked by hand") {
  // 0.8 x 264 = 211.2 thread blocks almost fill the H200 (2 per SM): no split from 212 on
  CHECK(split_heuristic(212, 264, 64) == 1);
  // 128 blocks (N = 1000, 8 heads, 16 Q blocks), 4 K/V blocks: s = 2 fills 256 of 264 slots
  // (0.97); s = 3 leaves ceil(4/3) = ceil(4/2) and is not eligible; s = 4 is no better
  CHECK(split_heuristic(128, 264, 4) == 2);
  // 26 blocks, 4 K/V blocks: efficiencies 0.10, 0.20, -, 0.39: the best, s = 4
  CHECK(split_heuristic(26, 264, 4) == 4);
  // 32 heads x 1 Q block, 64 K/V blocks: the best efficiency is 256/264 (s = 8, 16, 32, 64); the
  // first s within 0.85 of it is s = 7 (224/264 = 0.848; s = 6 gives 0.727)
  CHECK(split_heuristic(32, 264, 64) == 7);
  // 8 blocks, 64 K/V blocks: 22 splits give 0.667; 23-31 leave ceil(64/s) = 3 (not eligible);
  // 32 give 256/264
  CHECK(split_heuristic(8, 264, 64) == 32);
  CHECK(split_heuristic(1, 264, 1) == 1);  // one K/V block: nothing to split
}

// Each split's thread block of Q block i loads Q_i (when its K/V blocks hold a visible key), K_j
// and V_j of its own blocks, and writes O_s,i (d fp32 values per row) and L_s,i; the combine reads
// every split's O_s,i and L_s,i and writes O_i, L_i once.
TEST_CASE("split-KV counts: Q once per split, K and V once per Q block, partial O and L per split") {
  const std::uint64_t N = 1024, d = 64, H = 2, S = 4, e = 2;
  Config c = split_config(std::int64_t(N), std::int64_t(d), std::int64_t(H), std::int64_t(S));
  c.b_r = 64;
  c.b_c = 128;  // T_r = 16, T_c = 8, two K/V blocks per split
  const Counters k = count(resolve(c));
  REQUIRE(k.launches.size() == 2);
  CHECK(k.launches[0].name == "v2_forward_split");
  CHECK(k.launches[1].name == "flash_combine");
  CHECK(k.launches[0].grid == std::int64_t(16 * S * H));
  CHECK(k.launches[1].grid == std::int64_t(16 * H));
  CHECK(k.cost.bytes(Tensor::Q, Dir::read) == S * N * d * e * H);
  CHECK(k.cost.bytes(Tensor::K, Dir::read) == 16 * N * d * e * H);  // T_r passes over K, split S ways
  CHECK(k.cost.bytes(Tensor::V, Dir::read) == 16 * N * d * e * H);
  CHECK(k.cost.bytes(Tensor::Oacc, Dir::write) == S * N * d * 4 * H);
  CHECK(k.cost.bytes(Tensor::Lacc, Dir::write) == S * N * 4 * H);
  CHECK(k.cost.bytes(Tensor::Oacc, Dir::read) == S * N * d * 4 * H);
  CHECK(k.cost.bytes(Tensor::Lacc, Dir::read) == S * N * 4 * H);
  CHECK(k.cost.bytes(Tensor::O, Dir::write) == N * d * e * H);
  CHECK(k.cost.bytes(Tensor::L, Dir::write) == N * 4 * H);
  CHECK(k.cost.bytes(Tensor::O, Dir::read) == 0);
  CHECK(k.tiles.visited == 16 * 8 * H);  // every tile once, whichever split walks it
  // the same matmul FLOPs as the unsplit V2: 4 N_q N_k d per head
  CHECK(k.cost.flops == 4 * N * N * d * H);
}

// Causal, N = 256, B_r = B_c = 64, 2 splits of 2 K/V blocks: Q block i sees K/V blocks 0..i. Split
// 0 (blocks 0, 1) visits tiles for every i; split 1 (blocks 2, 3) only for i = 2, 3. Q loads: 4 + 2;
// K/V loads: the 10 visited tiles; every (split, Q block) writes its partial result (8 of them).
TEST_CASE("split-KV, causal: an empty split loads nothing and still writes O_s = 0, L_s = -inf") {
  Config c = split_config(256, 32, 1, 2, kCausal);
  c.b_r = c.b_c = 64;
  c.dtype = Dtype::fp32;
  const Counters k = count(resolve(c));
  CHECK(k.cost.bytes(Tensor::Q, Dir::read) == 6 * 64 * 32 * 4);
  CHECK(k.cost.bytes(Tensor::K, Dir::read) == 10 * 64 * 32 * 4);
  CHECK(k.cost.bytes(Tensor::Oacc, Dir::write) == 2 * 256 * 32 * 4);
  CHECK(k.cost.bytes(Tensor::Lacc, Dir::write) == 2 * 256 * 4);
  CHECK(k.tiles.visited == 10);
  CHECK(k.tiles.skipped == 6);
  CHECK(k.cost.flops == 10ull * 4 * 64 * 64 * 32);
}

// More splits than K/V blocks: splits past the last block walk nothing (FA2's n_block_min >=
// n_block_max), and still write their slots.
TEST_CASE("split-KV: splits past the last K/V block are empty") {
  Config c = split_config(128, 32, 1, 7);
  c.b_r = c.b_c = 64;  // T_c = 2: one block per split, splits 2..6 empty
  c.dtype = Dtype::fp32;
  const Counters k = count(resolve(c));
  CHECK(k.cost.bytes(Tensor::Q, Dir::read) == 2 * 128 * 32 * 4);  // two splits load Q
  CHECK(k.cost.bytes(Tensor::Oacc, Dir::write) == 7 * 128 * 32 * 4);
  CHECK(k.cost.bytes(Tensor::Oacc, Dir::read) == 7 * 128 * 32 * 4);
  CHECK(k.launches[0].grid == 2 * 7);
}

// PyTorch 2.11's FA2 on the H200 (Nsight Compute, tests/data/pytorch_fa2_h200_ncu.md): the split
// kernel's global load bytes and the combine's load and store bytes, to the kilobyte; the grids.
// The split kernel's store bytes are the model's plus what FA2's LSE stores add at sector
// granularity (docs/model.md "Split-KV": not modelled here; the tile and layout are FA2's, not
// this project's kernels').
TEST_CASE("--kernel fa2 reproduces PyTorch's split-KV launches: splits, tile, grid, load bytes") {
  struct Row {
    std::int64_t n, d, heads;
    Mask mask;
    std::int64_t splits, split_grid;
    double split_ld_mb, combine_ld_mb, combine_st_mb;
  };
  const Row rows[] = {
      {1000, 64, 8, {}, 2, 16 * 2 * 8, 34.816, 4.160, 1.056},
      {1000, 64, 8, kCausal, 2, 16 * 2 * 8, 22.299, 4.160, 1.056},
      {777, 32, 2, kCausal, 4, 13 * 4 * 2, 1.973, 0.830, 0.106},
  };
  for (const Row& r : rows) {
    CAPTURE(r.n);
    CAPTURE(r.d);
    Config c = split_config(r.n, r.d, r.heads, 1, r.mask);
    c.splits.reset();
    c.kernel = Kernel::fa2;
    const Problem p = resolve(c);
    CHECK(p.splits == r.splits);
    CHECK(p.tiling.b_r == 64);
    CHECK(p.tiling.b_c == 256);
    const Counters k = count(p);
    REQUIRE(k.launches.size() == 2);
    CHECK(k.launches[0].grid == r.split_grid);
    CHECK(same_mb(k.launches[0].cost.read_bytes(), r.split_ld_mb));
    CHECK(same_mb(k.launches[1].cost.write_bytes(), r.combine_st_mb));
    // the combine's loads: equal for N = 1000; for N = 777 (d = 32) FA2's combine loads 9.5 KB
    // (1.2%) more than the requests the model counts — not modelled (docs/model.md "Split-KV")
    if (r.n == 1000) CHECK(same_mb(k.launches[1].cost.read_bytes(), r.combine_ld_mb));
    else CHECK(double(k.launches[1].cost.read_bytes()) < r.combine_ld_mb * 1e6);
  }
}

TEST_CASE("--kernel fa2 without a split runs FA2's forward tile: the measured non-split rows") {
  Config c = split_config(4096, 64, 16, 1);
  c.splits.reset();
  c.kernel = Kernel::fa2;
  const Problem p = resolve(c);
  CHECK(p.splits == 1);  // 16 x 64 = 1024 blocks of 64 rows >= 211.2
  CHECK(p.tiling.b_r == 128);
  CHECK(p.tiling.b_c == 128);
  const Counters k = count(p);
  CHECK(k.launches.size() == 1);
  CHECK(k.grid_blocks == 32 * 16);
  CHECK(k.cost.read_bytes() == 545'259'520ull);  // 545.260 MB measured
  CHECK(k.cost.write_bytes() == 8'650'752ull);   // 8.651 MB
}

// A decode step of Llama-3-8B (32 query heads, 8 K/V heads, d = 128) against 8192 cached keys:
// FA2 drops the causal mask (one query, bottom-right: it sees every key) and folds the 4 query
// heads of a K/V head into 4 rows (seqlenq_ngroups_swapped): 8 heads x 1 Q block = 8 thread
// blocks, 64 K/V blocks of 128 -> 32 splits (split_heuristic(8, 264, 64)).
TEST_CASE("--kernel fa2 decode with GQA: heads folded into rows, causal dropped, 32 splits") {
  Config c;
  c.kernel = Kernel::fa2;
  c.n_q = 1;
  c.n_k = 8192;
  c.d = 128;
  c.heads = 32;
  c.kv_heads = 8;
  c.mask = Mask{MaskKind::causal_br, 0, 0};
  const Problem p = resolve(c);
  CHECK(p.folded);
  CHECK(p.heads == 8);
  CHECK(p.kv_heads == 8);
  CHECK(p.tiling.n_q == 4);
  CHECK(p.mask.kind == MaskKind::none);
  CHECK(p.splits == 32);
  CHECK(p.tiling.b_c == 128);
  const Counters k = count(p);
  CHECK(k.launches[0].grid == 1 * 32 * 8);
  // K and V read once per K/V head (one Q block): 2 x 8192 x 128 x 2 bytes x 8
  CHECK(k.cost.bytes(Tensor::K, Dir::read) + k.cost.bytes(Tensor::V, Dir::read) == 2ull * 8192 * 128 * 2 * 8);
}

TEST_CASE("--splits and --kernel fa2 refuse what they cannot run, naming the field") {
  const auto refused = [](Config c, const char* field) {
    CAPTURE(field);
    try {
      resolve(c);
      FAIL("accepted");
    } catch (const ConfigError& e) {
      CHECK(e.field() == field);
    }
  };
  Config v1 = split_config(1024, 64, 1, 2);
  v1.algo = Algo::v1;
  refused(v1, "splits");
  Config bwd = split_config(1024, 64, 1, 2);
  bwd.pass = Pass::backward;
  refused(bwd, "splits");
  Config kv_outer = split_config(1024, 64, 1, 0);
  kv_outer.order = LoopOrder::kv_outer;
  refused(kv_outer, "splits");
  refused(split_config(1024, 64, 1, 129), "splits");
  Config tl = split_config(1024, 64, 1, 1, kCausal);
  tl.n_q = 1000;
  tl.kernel = Kernel::fa2;
  refused(tl, "mask");
  Config big = split_config(1024, 320, 1, 1);
  big.kernel = Kernel::fa2;
  refused(big, "d");
  CHECK_THROWS_AS(parse_splits("0"), ConfigError);
  CHECK_THROWS_AS(parse_splits("2x"), ConfigError);
  CHECK(parse_splits("auto") == 0);
  CHECK(parse_splits("128") == 128);
}
