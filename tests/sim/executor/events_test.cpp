// Event streams of small configs against sequences written out by hand (docs/events.md).
#include <doctest/doctest.h>

#include "flashlab/executor/event_recorder.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;
using flashlab::test::ev;

namespace {

constexpr Op L = Op::load, S = Op::store, C = Op::compute, K = Op::skip, B = Op::barrier, R = Op::reduce;
constexpr Tensor N = Tensor::none;

std::vector<Event> block_of(const std::vector<Event>& all, std::uint32_t block) {
  std::vector<Event> v;
  for (const Event& e : all)
    if (e.block == block) v.push_back(e);
  return v;
}

std::vector<Event> without_warp_events(const std::vector<Event>& all) {
  std::vector<Event> v;
  for (const Event& e : all)
    if (e.warp == -1) v.push_back(e);
  return v;
}

}  // namespace

// V2, top-left causal, N = 5, d = 4, B_r = B_c = 2, fp16 (2 bytes): T_r = T_c = 3, the last row
// and column blocks are ragged (1 row, 1 key). Tile (0,0) is partial, (0,1) and (0,2) skipped,
// (1,0) full, (1,1) partial, (1,2) skipped, (2,0) (2,1) (2,2) full.
TEST_CASE("V2 causal, ragged, skipped and partial tiles: the block-level stream by hand") {
  const Problem p = resolve(test::small(Algo::v2, 5, 5, 4, 2, 2, Mask{MaskKind::causal_tl, 0, 0}));
  const Trace t = record_trace(p, TraceLevel::block);
  const Eq init = Eq::init_stats, sc = Eq::scores, sm = Eq::softmax_v2, out = Eq::output_v2, fin = Eq::finalize_v2;
  const std::vector<Event> want = {
      // block 0: Q_0 (2 x 4 x 2 bytes), one partial tile, two skipped, O_0 and L_0 written
      ev(0, 0, L, Tensor::Q, 0, -1, 2, 4, 16), ev(0, 0, C, N, 0, -1, 2, 4, 0, -1, init),
      ev(0, 1, L, Tensor::K, 0, 0, 2, 4, 16), ev(0, 1, L, Tensor::V, 0, 0, 2, 4, 16),
      ev(0, 1, C, N, 0, 0, 2, 2, 0, -1, sc), ev(0, 1, C, N, 0, 0, 2, 2, 0, -1, sm), ev(0, 1, C, N, 0, 0, 2, 2, 0, -1, out),
      ev(0, 2, K, N, 0, 1, 2, 2), ev(0, 3, K, N, 0, 2, 2, 1),
      ev(0, 4, C, N, 0, -1, 2, 4, 0, -1, fin), ev(0, 4, S, Tensor::O, 0, -1, 2, 4, 16), ev(0, 4, S, Tensor::L, 0, -1, 2, 1, 8),
      // block 1: tiles (1,0) full and (1,1) partial, (1,2) skipped
      ev(1, 0, L, Tensor::Q, 1, -1, 2, 4, 16), ev(1, 0, C, N, 1, -1, 2, 4, 0, -1, init),
      ev(1, 1, L, Tensor::K, 1, 0, 2, 4, 16), ev(1, 1, L, Tensor::V, 1, 0, 2, 4, 16),
      ev(1, 1, C, N, 1, 0, 2, 2, 0, -1, sc), ev(1, 1, C, N, 1, 0, 2, 2, 0, -1, sm), ev(1, 1, C, N, 1, 0, 2, 2, 0, -1, out),
      ev(1, 2, L, Tensor::K, 1, 1, 2, 4, 16), ev(1, 2, L, Tensor::V, 1, 1, 2, 4, 16),
      ev(1, 2, C, N, 1, 1, 2, 2, 0, -1, sc), ev(1, 2, C, N, 1, 1, 2, 2, 0, -1, sm), ev(1, 2, C, N, 1, 1, 2, 2, 0, -1, out),
      ev(1, 3, K, N, 1, 2, 2, 1),
      ev(1, 4, C, N, 1, -1, 2, 4, 0, -1, fin), ev(1, 4, S, Tensor::O, 1, -1, 2, 4, 16), ev(1, 4, S, Tensor::L, 1, -1, 2, 1, 8),
      // block 2: one ragged row; K_2, V_2 hold one key (1 x 4 x 2 = 8 bytes)
      ev(2, 0, L, Tensor::Q, 2, -1, 1, 4, 8), ev(2, 0, C, N, 2, -1, 1, 4, 0, -1, init),
      ev(2, 1, L, Tensor::K, 2, 0, 2, 4, 16), ev(2, 1, L, Tensor::V, 2, 0, 2, 4, 16),
      ev(2, 1, C, N, 2, 0, 1, 2, 0, -1, sc), ev(2, 1, C, N, 2, 0, 1, 2, 0, -1, sm), ev(2, 1, C, N, 2, 0, 1, 2, 0, -1, out),
      ev(2, 2, L, Tensor::K, 2, 1, 2, 4, 16), ev(2, 2, L, Tensor::V, 2, 1, 2, 4, 16),
      ev(2, 2, C, N, 2, 1, 1, 2, 0, -1, sc), ev(2, 2, C, N, 2, 1, 1, 2, 0, -1, sm), ev(2, 2, C, N, 2, 1, 1, 2, 0, -1, out),
      ev(2, 3, L, Tensor::K, 2, 2, 1, 4, 8), ev(2, 3, L, Tensor::V, 2, 2, 1, 4, 8),
      ev(2, 3, C, N, 2, 2, 1, 1, 0, -1, sc), ev(2, 3, C, N, 2, 2, 1, 1, 0, -1, sm), ev(2, 3, C, N, 2, 2, 1, 1, 0, -1, out),
      ev(2, 4, C, N, 2, -1, 1, 4, 0, -1, fin), ev(2, 4, S, Tensor::O, 2, -1, 1, 4, 8), ev(2, 4, S, Tensor::L, 2, -1, 1, 1, 4),
  };
  INFO("got:\n" << test::listing(t.events) << "want:\n" << test::listing(want));
  CHECK(test::same_events(t.events, want));
}

// The same config with W = 2 warps, split-Q: block 2 has one row, so warp 1 owns no row there
// ([1, 2) ∩ [0, 1) is empty): it computes nothing but still reaches both barriers of each tile.
TEST_CASE("V2 split-Q, W = 2, the ragged Q block: warp events by hand, warp 1 idle") {
  Config c = test::small(Algo::v2, 5, 5, 4, 2, 2, Mask{MaskKind::causal_tl, 0, 0});
  c.warps = 2;
  const Problem p = resolve(c);
  const Trace t = record_trace(p, TraceLevel::warp);
  const Eq init = Eq::init_stats, sc = Eq::scores, sm = Eq::softmax_v2, out = Eq::output_v2, fin = Eq::finalize_v2;
  auto tile = [&](std::uint32_t step, int j, unsigned cols, std::uint64_t kv_bytes, unsigned kv_rows) {
    return std::vector<Event>{
        ev(2, step, L, Tensor::K, 2, j, kv_rows, 4, kv_bytes), ev(2, step, L, Tensor::V, 2, j, kv_rows, 4, kv_bytes),
        ev(2, step, B, N, 2, j, 0, 0, 0, 0), ev(2, step, B, N, 2, j, 0, 0, 0, 1),
        ev(2, step, C, N, 2, j, 1, cols, 0, -1, sc), ev(2, step, C, N, 2, j, 1, cols, 0, 0, sc),
        ev(2, step, C, N, 2, j, 1, cols, 0, -1, sm), ev(2, step, C, N, 2, j, 1, cols, 0, 0, sm),
        ev(2, step, C, N, 2, j, 1, cols, 0, -1, out), ev(2, step, C, N, 2, j, 1, cols, 0, 0, out),
        ev(2, step, B, N, 2, j, 0, 0, 0, 0), ev(2, step, B, N, 2, j, 0, 0, 0, 1)};
  };
  std::vector<Event> want = {ev(2, 0, L, Tensor::Q, 2, -1, 1, 4, 8), ev(2, 0, C, N, 2, -1, 1, 4, 0, -1, init),
                             ev(2, 0, C, N, 2, -1, 1, 4, 0, 0, init)};
  for (const auto& part : {tile(1, 0, 2, 16, 2), tile(2, 1, 2, 16, 2), tile(3, 2, 1, 8, 1)})
    want.insert(want.end(), part.begin(), part.end());
  for (const Event& e : {ev(2, 4, C, N, 2, -1, 1, 4, 0, -1, fin), ev(2, 4, C, N, 2, -1, 1, 4, 0, 0, fin),
                         ev(2, 4, S, Tensor::O, 2, -1, 1, 4, 8), ev(2, 4, S, Tensor::L, 2, -1, 1, 1, 4)})
    want.push_back(e);
  const std::vector<Event> got = block_of(t.events, 2);
  INFO("got:\n" << test::listing(got) << "want:\n" << test::listing(want));
  CHECK(test::same_events(got, want));
  // block 0 (two rows): each warp owns one row; the skipped tile (0,1) is one skip event, no barrier
  const std::vector<Event> b0 = block_of(t.events, 0);
  CHECK(test::same_events(std::vector<Event>(b0.begin() + 2, b0.begin() + 4),
                          {ev(0, 0, C, N, 0, -1, 1, 4, 0, 0, init), ev(0, 0, C, N, 0, -1, 1, 4, 0, 1, init)}));
  CHECK(test::same_events(block_of(without_warp_events(t.events), 0), block_of(record_trace(p, TraceLevel::block).events, 0)));
  int skips = 0;
  for (const Event& e : b0) skips += e.op == K;
  CHECK(skips == 2);
}

// V1 (kv-outer, one thread block), split-K, W = 2, N = 3, d = 2, B_r = B_c = 2, no mask, fp16.
// Tile (1,1) is 1 x 1: warp 0 owns column [0, 1) and row [0, 1); warp 1 owns neither, but writes
// its (identity) partials and reads the row max, as the uniform kernel code does.
TEST_CASE("V1 split-K, W = 2, the 1 x 1 ragged tile: reductions through shared memory by hand") {
  Config c = test::small(Algo::v1, 3, 3, 2, 2, 2);
  c.warps = 2;
  const Problem p = resolve(c);
  REQUIRE(p.split == WarpSplit::split_k);
  const Trace t = record_trace(p, TraceLevel::warp);
  std::vector<Event> got;
  for (const Event& e : t.events)
    if (e.i == 1 && e.j == 1) got.push_back(e);
  REQUIRE(!got.empty());
  const std::uint32_t s = got.front().step;
  const Eq sc = Eq::scores, sm = Eq::softmax_v1, out = Eq::output_v1;
  const std::vector<Event> want = {
      ev(0, s, L, Tensor::Q, 1, 1, 1, 2, 4), ev(0, s, L, Tensor::O, 1, 1, 1, 2, 4),
      ev(0, s, L, Tensor::l, 1, 1, 1, 1, 4), ev(0, s, L, Tensor::m, 1, 1, 1, 1, 4),
      ev(0, s, B, N, 1, 1, 0, 0, 0, 0), ev(0, s, B, N, 1, 1, 0, 0, 0, 1),
      ev(0, s, C, N, 1, 1, 1, 1, 0, -1, sc), ev(0, s, C, N, 1, 1, 1, 1, 0, 0, sc),
      ev(0, s, C, N, 1, 1, 1, 1, 0, -1, sm), ev(0, s, C, N, 1, 1, 1, 1, 0, 0, sm),
      // row max: each warp writes 1 row x 4 bytes, then every warp reads both partials (8 bytes)
      ev(0, s, R, Tensor::m, 1, 1, 1, 1, 4, 0, sm), ev(0, s, R, Tensor::m, 1, 1, 1, 1, 4, 1, sm),
      ev(0, s, B, N, 1, 1, 0, 0, 0, 0), ev(0, s, B, N, 1, 1, 0, 0, 0, 1),
      ev(0, s, R, Tensor::m, 1, 1, 1, 1, 8, 0, sm), ev(0, s, R, Tensor::m, 1, 1, 1, 1, 8, 1, sm),
      // row sum: written by both, read by the owner of the row (warp 0)
      ev(0, s, R, Tensor::l, 1, 1, 1, 1, 4, 0, sm), ev(0, s, R, Tensor::l, 1, 1, 1, 1, 4, 1, sm),
      ev(0, s, B, N, 1, 1, 0, 0, 0, 0), ev(0, s, B, N, 1, 1, 0, 0, 0, 1),
      ev(0, s, R, Tensor::l, 1, 1, 1, 1, 8, 0, sm),
      ev(0, s, C, N, 1, 1, 1, 1, 0, -1, out), ev(0, s, C, N, 1, 1, 1, 1, 0, 0, out),
      // partial P~V: 1 x d = 1 x 2 fp32 per warp (8 bytes); the owner reads both (16 bytes)
      ev(0, s, R, Tensor::O, 1, 1, 1, 2, 8, 0, out), ev(0, s, R, Tensor::O, 1, 1, 1, 2, 8, 1, out),
      ev(0, s, B, N, 1, 1, 0, 0, 0, 0), ev(0, s, B, N, 1, 1, 0, 0, 0, 1),
      ev(0, s, R, Tensor::O, 1, 1, 1, 2, 16, 0, out),
      ev(0, s, S, Tensor::O, 1, 1, 1, 2, 4), ev(0, s, S, Tensor::l, 1, 1, 1, 1, 4), ev(0, s, S, Tensor::m, 1, 1, 1, 1, 4),
      ev(0, s, B, N, 1, 1, 0, 0, 0, 0), ev(0, s, B, N, 1, 1, 0, 0, 0, 1),
  };
  INFO("got:\n" << test::listing(got) << "want:\n" << test::listing(want));
  CHECK(test::same_events(got, want));
}

TEST_CASE("every level keeps the block-level stream: dropping warp events gives the block trace") {
  for (Algo a : {Algo::standard, Algo::v1, Algo::v2})
    for (WarpSplit sp : {WarpSplit::split_q, WarpSplit::split_k})
      for (int w : {1, 3, 4}) {
        Config c = test::small(a, 37, 29, 8, 8, 6, Mask{MaskKind::causal_br, 0, 0});
        c.warps = w;
        if (a != Algo::standard) c.split = sp;  // standard attention takes no warp split (resolve refuses it)
        const Problem p = resolve(c);
        CAPTURE(int(a));
        CAPTURE(w);
        CHECK(test::same_events(without_warp_events(record_trace(p, TraceLevel::warp).events),
                                record_trace(p, TraceLevel::block).events));
      }
}

TEST_CASE("the block-level fast path gives exactly append_block_events' events") {
  const Mask masks[] = {Mask{}, Mask{MaskKind::causal_tl, 0, 0}, Mask{MaskKind::window, 7, 0}};
  for (Algo a : {Algo::standard, Algo::v1, Algo::v2})
    for (const Mask& m : masks)
      for (std::int64_t n : {1, 16, 37}) {
        const Problem p = resolve(test::small(a, n, n + 5, 8, 8, 6, m));
        Executor ex(p);
        EventRecorder plain(p);
        ex.add_observer(&plain);
        ex.run();
        CAPTURE(int(a));
        CAPTURE(n);
        CHECK(test::same_events(record_trace(p, TraceLevel::block).events, plain.events()));
      }
}
