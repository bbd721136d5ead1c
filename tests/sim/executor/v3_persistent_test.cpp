// V3 under FA3's persistent scheduler, against docs/events.md "V3", derived by hand: which thread
// block (CTA) runs which Q block, the step numbers it counts on across its tiles, the K/V stage
// ring's stage and phase carried from one tile to the next, Q's barrier phase per tile, and the K/V
// blocks walked from the last visible one down (the partial block first).
//
// The config: N_q = N_k = 1536, d = 128, causal (top-left), FA3's tile for it 128 x 128: T_r =
// T_c = 12; Q block i visits K/V blocks 0..i (i partial, the rest full) and skips i+1..11. The
// persistent scheduler hands out the longest Q blocks first: dispatch position t is Q block 11 - t,
// and with a grid of G thread blocks, thread block c runs positions c, c + G, c + 2G, ...
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "../../common/config_helpers.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;

namespace {

Problem causal_1536(std::optional<TileScheduler> scheduler = {}) {
  Config c;
  c.algo = Algo::v3;
  c.n_q = c.n_k = 1536;
  c.d = 128;
  c.mask = Mask{MaskKind::causal_tl};
  c.scheduler = scheduler;
  return resolve(c);
}

// The same on a grid of 5 thread blocks (a GPU of 5 SMs, so that thread blocks run two or three
// tiles): thread block 0 runs Q blocks 11, 6, 1; 1 runs 10, 5, 0; 2 runs 9, 4; 3: 8, 3; 4: 7, 2.
Problem causal_1536_on_5_sms() {
  Problem p = causal_1536();
  p.gpu.sms = 5;
  return p;
}

std::vector<Event> at(const std::vector<Event>& all, std::uint32_t block, std::uint32_t step) {
  std::vector<Event> v;
  std::copy_if(all.begin(), all.end(), std::back_inserter(v),
               [&](const Event& e) { return e.block == block && e.step == step; });
  return v;
}

// A copy, not a pointer: callers pass the temporary that at() returns.
std::optional<Event> find(const std::vector<Event>& v, Op op, Tensor t, Eq eq, std::uint8_t agent) {
  const auto it = std::find_if(v.begin(), v.end(), [&](const Event& e) {
    return e.op == op && e.tensor == t && e.eq == eq && e.agent == agent;
  });
  return it == v.end() ? std::nullopt : std::optional<Event>(*it);
}

constexpr std::uint8_t P = kAgentProducer, W0 = kAgentConsumer;

// Warpgroup 0's wait for tensor t's barrier full in thread block `block`'s step: on K/V block j (-1:
// Q's, which has none), in the stage and phase given.
void check_full_wait(const std::vector<Event>& ev, std::uint32_t block, std::uint32_t step, Tensor t, std::int32_t j,
                     std::uint32_t stage, std::uint32_t phase) {
  CAPTURE(step);
  const std::optional<Event> w = find(at(ev, block, step), Op::wait, t, Eq::stage_full, W0);
  REQUIRE(w);
  CHECK(w->j == j);
  CHECK(w->rows == stage);
  CHECK(w->cols == phase);
}

}  // namespace

TEST_CASE("V3 persistent, causal N = 1536 on the H200's 132 SMs: thread block c runs Q block 11 - c from step 0") {
  const Problem p = causal_1536();
  REQUIRE(p.tiling.b_r == 128);
  REQUIRE(p.tiling.b_c == 128);
  REQUIRE(p.gpu.sms == 132);
  const std::vector<Event> ev = record_trace(p, TraceLevel::block).events;
  for (const Event& e : ev) {
    CHECK(e.block == std::uint32_t(11 - e.i));  // 12 tiles, 132 thread blocks: one tile each
    CHECK(e.step <= 13);                         // Q_i, 12 K/V steps (visited or skipped), O_i and L_i
  }
}

TEST_CASE("V3 persistent on 5 SMs: which thread block runs which Q block, steps counted on across its tiles") {
  const std::vector<Event> ev = record_trace(causal_1536_on_5_sms(), TraceLevel::block).events;
  // every Q block takes 14 steps (1 + 12 + 1), so the k-th tile of a thread block starts at step 14 k
  const std::int32_t runs[5][3] = {{11, 6, 1}, {10, 5, 0}, {9, 4, -1}, {8, 3, -1}, {7, 2, -1}};
  for (std::uint32_t c = 0; c < 5; ++c)
    for (std::uint32_t k = 0; k < 3; ++k) {
      const std::vector<Event> begin = at(ev, c, 14 * k);
      if (runs[c][k] < 0) {
        CHECK(begin.empty());
        continue;
      }
      REQUIRE(!begin.empty());
      for (const Event& e : begin) CHECK(e.i == runs[c][k]);
      CHECK(at(ev, c, 14 * k + 13).front().i == runs[c][k]);  // its outer end
    }
  for (const Event& e : ev) CHECK(e.block < 5);
}

TEST_CASE("V3: K/V blocks from the last visible one down, the partial (masked) block first") {
  const std::vector<Event> ev = record_trace(causal_1536_on_5_sms(), TraceLevel::block).events;
  // thread block 1's second tile is Q block 5, steps 14..27: steps 15..20 skip j = 11, 10, 9, 8, 7,
  // 6; step 21 is j = 5 (partial), 22..26 j = 4..0 (full)
  for (std::uint32_t s = 15; s <= 20; ++s) {
    const std::vector<Event> e = at(ev, 1, s);
    REQUIRE(e.size() == 1);
    CHECK(e[0].op == Op::skip);
    CHECK(e[0].j == std::int32_t(11 - (s - 15)));
  }
  for (std::uint32_t s = 21; s <= 26; ++s) {
    const std::optional<Event> gemm0 = find(at(ev, 1, s), Op::compute, Tensor::none, Eq::scores, W0);
    REQUIRE(gemm0);
    CHECK(gemm0->i == 5);
    CHECK(gemm0->j == std::int32_t(5 - (s - 21)));
  }
}

TEST_CASE("V3 persistent: the stage ring and Q's barrier carry on from one tile of a thread block to the next") {
  const std::vector<Event> ev = record_trace(causal_1536_on_5_sms(), TraceLevel::block).events;
  // thread block 1: Q block 10 (steps 0..13: j = 11 skipped at step 1, j = 10..0 at steps 2..12)
  // visits 11 K/V blocks (ring positions n = 0..10), then Q block 5 (steps 14..27) six (n = 11..16),
  // then Q block 0 (steps 28..41: j = 0 at step 40) one (n = 17). 2 stages: stage n mod 2, phase
  // (n / 2) mod 2; the producer's empty waits a phase ahead (its state starts at phase 1).
  struct Expect {
    std::uint32_t step;
    std::int32_t j;
    std::uint32_t stage, phase;
  };
  const Expect expect[] = {{2, 10, 0, 0},   // n = 0, Q block 10's first (its partial block)
                           {12, 0, 0, 1},   // n = 10
                           {21, 5, 1, 1},   // n = 11: Q block 5 starts where block 10 left off
                           {22, 4, 0, 0},   // n = 12
                           {26, 0, 0, 0},   // n = 16
                           {40, 0, 1, 0}};  // n = 17: Q block 0's only K/V block, after 11 skips
  for (const Expect& x : expect) {
    check_full_wait(ev, 1, x.step, Tensor::K, x.j, x.stage, x.phase);
    const std::optional<Event> empty = find(at(ev, 1, x.step), Op::wait, Tensor::V, Eq::stage_empty, P);
    REQUIRE(empty);
    CHECK(empty->rows == x.stage);
    CHECK(empty->cols == (x.phase ^ 1u));
  }
  // the deferred GEMM1s: of j = 5 (n = 11) in step 22, of Q block 5's last, j = 0 (n = 16), in its outer end
  check_full_wait(ev, 1, 22, Tensor::V, 5, 1, 1);
  check_full_wait(ev, 1, 27, Tensor::V, 0, 0, 0);
  // Q's barrier: one buffer, its phase the tile's parity among the thread block's (FA3's work_idx % 2)
  check_full_wait(ev, 1, 0, Tensor::Q, -1, 0, 0);
  check_full_wait(ev, 1, 14, Tensor::Q, -1, 0, 1);
  check_full_wait(ev, 1, 28, Tensor::Q, -1, 0, 0);
}

TEST_CASE("V3 with --scheduler grid: one thread block per Q block, the longest first, the ring and Q's phase start afresh") {
  const std::vector<Event> ev = record_trace(causal_1536(TileScheduler::grid), TraceLevel::block).events;
  // causal, the longest Q block first (T_r = 12): thread block b is Q block 11 - b, so Q block 5 is
  // thread block 6; its first visited K/V block (j = 5, step 7, after the skips of j = 11..6) at n = 0
  for (const Event& e : ev) CHECK(e.block == std::uint32_t(11 - e.i));
  check_full_wait(ev, 6, 7, Tensor::K, 5, 0, 0);
  check_full_wait(ev, 6, 0, Tensor::Q, -1, 0, 0);
}

TEST_CASE("V3 persistent: tile_step names the thread block and the dispatch position, a persistent trace round-trips") {
  const Problem p = causal_1536_on_5_sms();
  const Executor x(p);
  const StepView s = x.tile_step(5, 0);  // Q block 5: dispatch position 6, thread block 6 mod 5
  CHECK(s.dispatch == 6);
  CHECK(s.block == 1);
  const Trace t = record_trace(p, TraceLevel::block);
  const Trace back = decode_trace(encode_trace(t, TraceFormat::binary));
  REQUIRE(back.events.size() == t.events.size());
  for (std::size_t k = 0; k < t.events.size(); ++k) CHECK(same_event(back.events[k], t.events[k]));
}

TEST_CASE("V3 persistent without an SM count: the executor refuses the launch, naming gpu.sms") {
  Problem p = causal_1536();
  p.gpu.sms = 0;
  CHECK_THROWS_WITH_AS(Executor{p}, doctest::Contains("gpu.sms >= 1"), std::logic_error);
}
