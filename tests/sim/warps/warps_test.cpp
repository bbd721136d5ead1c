// The warp model's counters against the closed forms of docs/warps.md, derived here per tile and
// per warp with slices counted element by element (not with the model's interval arithmetic).
#include <doctest/doctest.h>

#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/warps/warps.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;

namespace {

using u64 = std::uint64_t;

// Indices x in [0, n) owned by warp w when `block` indices are split over W warps: the x with
// ⌊w·block/W⌋ <= x < ⌊(w+1)·block/W⌋, counted one by one.
u64 owned(std::int64_t w, std::int64_t W, std::int64_t block, std::int64_t n) {
  u64 count = 0;
  for (std::int64_t x = 0; x < n; ++x)
    if (x >= w * block / W && x < (w + 1) * block / W) ++count;
  return count;
}

void add(WarpWork& k, OpKind kind, u64 n) { k.ops[int(kind)] += n; }

// One visited tile r x c of warp w (docs/warps.md "Per tile").
WarpWork tile_work(const Problem& p, std::int64_t w, u64 r, u64 c) {
  const std::int64_t W = p.warps;
  const u64 d = u64(p.tiling.d), Wu = u64(W);
  WarpWork k;
  const bool v2 = p.algo == Algo::v2;
  if (p.split == WarpSplit::split_q || W == 1) {
    const u64 rw = owned(w, W, p.tiling.b_r, std::int64_t(r));
    k.flops = 4 * rw * c * d;
    k.barriers = 2;
    if (v2) {  // FA2 Alg. 1 lines 8-10 on r_w rows
      add(k, OpKind::max, rw * c);
      add(k, OpKind::sub, rw * c + rw);
      add(k, OpKind::exp, rw * c + rw);
      add(k, OpKind::mul, rw * c + rw + rw * d);
      add(k, OpKind::add, rw * c + rw * d);
    } else {  // FA1 Alg. 1 lines 9-12 on r_w rows
      add(k, OpKind::max, rw * (c - 1) + rw);
      add(k, OpKind::sub, rw * c + 2 * rw);
      add(k, OpKind::exp, rw * c + 2 * rw);
      add(k, OpKind::add, rw * (c - 1) + rw + rw * d);
      add(k, OpKind::mul, rw * c + 2 * rw + rw + 2 * rw * d);
      add(k, OpKind::div, 2 * rw * d);
    }
    return k;
  }
  const u64 cw = owned(w, W, p.tiling.b_c, std::int64_t(c));  // columns of S
  const u64 rw = owned(w, W, p.tiling.b_r, std::int64_t(r));  // rows of O it owns
  const u64 part = cw > 0 ? r * (cw - 1) : 0;                  // a partial max / sum over its columns
  k.flops = 4 * r * cw * d;
  k.barriers = 5;
  k.smem_write = 4 * r * (d + 2);
  k.smem_read = 4 * Wu * (r + rw + rw * d);
  add(k, OpKind::sub, r * cw);
  add(k, OpKind::exp, r * cw);
  add(k, OpKind::mul, r * cw);
  add(k, OpKind::max, part + (Wu - 1) * r);
  add(k, OpKind::add, part + (Wu - 1) * rw + rw + (Wu - 1) * rw * d + rw * d);
  if (v2) {
    add(k, OpKind::max, r);
    add(k, OpKind::sub, rw);
    add(k, OpKind::exp, rw);
    add(k, OpKind::mul, rw + rw * d);
  } else {
    add(k, OpKind::max, rw);
    add(k, OpKind::sub, 2 * rw);
    add(k, OpKind::exp, 2 * rw);
    add(k, OpKind::mul, 2 * rw + rw + 2 * rw * d);
    add(k, OpKind::div, 2 * rw * d);
  }
  return k;
}

// Every warp of a run, one (batch, head), from the closed forms.
std::vector<WarpWork> expected(const Problem& p) {
  const Tiling& t = p.tiling;
  std::vector<WarpWork> out(std::size_t(p.warps));
  for (std::int64_t i = 0; i < t.t_r(); ++i) {
    bool any = false;
    for (std::int64_t j = 0; j < t.t_c(); ++j) {
      const bool visit = !p.block_skip || tile_class(t, p.band, i, j) != TileClass::skipped;
      if (!visit) continue;
      any = true;
      for (std::int64_t w = 0; w < p.warps; ++w) out[std::size_t(w)] += tile_work(p, w, u64(t.rows(i)), u64(t.cols(j)));
    }
    if (p.algo == Algo::v2 && any)  // FA2 lines 12-13 on the warp's rows of O
      for (std::int64_t w = 0; w < p.warps; ++w) {
        const u64 rw = owned(w, p.warps, t.b_r, t.rows(i));
        add(out[std::size_t(w)], OpKind::div, rw * u64(t.d));
        add(out[std::size_t(w)], OpKind::log, rw);
        add(out[std::size_t(w)], OpKind::add, rw);
      }
  }
  return out;
}

std::vector<WarpWork> counted(const Problem& p) {
  Executor e(p);
  WarpCounter wc(p);
  e.add_observer(&wc);
  e.run();
  return wc.per_head();
}

}  // namespace

TEST_CASE("warp_slice: even, uneven and ragged splits") {
  CHECK(warp_slice(0, 4, 128, 128).first == 0);
  CHECK(warp_slice(3, 4, 128, 128).first == 96);
  CHECK(warp_slice(3, 4, 128, 128).count == 32);
  // B_r = 7 over 4 warps: 1, 2, 2, 2 rows ([0,1) [1,3) [3,5) [5,7))
  CHECK(warp_slice(0, 4, 7, 7).count == 1);
  CHECK(warp_slice(1, 4, 7, 7).count == 2);
  CHECK(warp_slice(3, 4, 7, 7).first == 5);
  // a ragged block of 4 rows: warps 2 and 3 get [3,4) and nothing
  CHECK(warp_slice(2, 4, 7, 4).count == 1);
  CHECK(warp_slice(3, 4, 7, 4).count == 0);
  // more warps than rows: idle warps
  CHECK(warp_slice(0, 4, 2, 2).count == 0);
  CHECK(warp_slice(1, 4, 2, 2).count == 1);
}

TEST_CASE("per-warp FLOPs, ops, shared-memory bytes and barriers equal the closed forms") {
  struct Case {
    Algo a;
    WarpSplit split;
    int warps;
    std::int64_t n_q, n_k, d, b_r, b_c;
    Mask mask;
  };
  const Case cases[] = {
      {Algo::v2, WarpSplit::split_q, 4, 23, 17, 5, 7, 10, Mask{MaskKind::causal_br, 0, 0}},
      {Algo::v2, WarpSplit::split_k, 3, 23, 17, 5, 7, 10, Mask{MaskKind::causal_br, 0, 0}},
      {Algo::v1, WarpSplit::split_k, 4, 19, 31, 3, 6, 10, Mask{}},
      {Algo::v1, WarpSplit::split_q, 5, 19, 31, 3, 6, 10, Mask{MaskKind::window, 5, 2}},
      {Algo::v2, WarpSplit::split_k, 8, 13, 20, 4, 4, 6, Mask{MaskKind::causal_tl, 0, 0}},  // W > B_c: idle warps
      {Algo::v2, WarpSplit::split_k, 1, 13, 20, 4, 4, 6, Mask{}},                           // W = 1: no reduction
      {Algo::v1, WarpSplit::split_k, 2, 5, 5, 2, 2, 2, Mask{MaskKind::causal_tl, 0, 0}},
  };
  for (const Case& k : cases) {
    Config c = test::small(k.a, k.n_q, k.n_k, k.d, k.b_r, k.b_c, k.mask);
    c.warps = k.warps;
    c.split = k.split;
    const Problem p = resolve(c);
    const auto got = counted(p), want = expected(p);
    REQUIRE(got.size() == std::size_t(k.warps));
    for (int w = 0; w < k.warps; ++w) {
      CAPTURE(int(k.a));
      CAPTURE(int(k.split));
      CAPTURE(k.warps);
      CAPTURE(w);
      const WarpWork &g = got[std::size_t(w)], &e = want[std::size_t(w)];
      CHECK(g.flops == e.flops);
      for (int o = 0; o < kOpKindCount; ++o) {
        CAPTURE(to_string(OpKind(o)));
        CHECK(g.ops[std::size_t(o)] == e.ops[std::size_t(o)]);
      }
      CHECK(g.smem_write == e.smem_write);
      CHECK(g.smem_read == e.smem_read);
      CHECK(g.barriers == e.barriers);
    }
  }
}

TEST_CASE("split-Q: the warps' FLOPs and ops add up to the block's counters, split-K does more") {
  for (WarpSplit sp : {WarpSplit::split_q, WarpSplit::split_k}) {
    Config c = test::small(Algo::v2, 48, 48, 8, 16, 16, Mask{MaskKind::causal_tl, 0, 0});  // no ragged tile
    c.warps = 4;
    c.split = sp;
    const Problem p = resolve(c);
    WarpWork sum;
    for (const WarpWork& w : counted(p)) sum += w;
    const Counters k = count(p);
    CHECK(sum.flops == k.cost.flops);
    if (sp == WarpSplit::split_q) {
      for (int o = 0; o < kOpKindCount; ++o) CHECK(sum.ops[std::size_t(o)] == k.cost.ops[std::size_t(o)]);
      CHECK(sum.smem_write + sum.smem_read == 0);
    } else {
      // V2 split-K: every warp combines the W partial maxima and folds in m_old on every tile:
      // r·W·(W-1) more max per tile than the block count, and (W-1)·r·d more add for the O sum.
      std::uint64_t r_sum = 0;  // Σ over visited tiles of rows(i)
      for (std::int64_t i = 0; i < p.tiling.t_r(); ++i)
        for (std::int64_t j = 0; j < p.tiling.t_c(); ++j)
          if (tile_class(p.tiling, p.band, i, j) != TileClass::skipped) r_sum += std::uint64_t(p.tiling.rows(i));
      CHECK(sum.op(OpKind::max) == k.cost.op(OpKind::max) + r_sum * 4 * 3);
      CHECK(sum.op(OpKind::add) == k.cost.op(OpKind::add) + r_sum * 3 * 8);
      CHECK(sum.op(OpKind::exp) == k.cost.op(OpKind::exp));
    }
  }
}
