// V3's events against what docs/events.md "V3" says, counted and placed by hand: the agent of each
// event, the stage ring's stages and phases, WGMMA commit/wait, ping-pong, the deferred GEMM1.
#include <doctest/doctest.h>

#include <algorithm>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "../../common/config_helpers.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;

namespace {

// N_q = 100, N_k = 40, d = 16, B_r = 128, B_c = 16: one Q block of 100 rows (consumer warpgroup 0
// owns rows 0-63, warpgroup 1 rows 64-99: 36), K/V blocks of 16, 16 and 8 keys; FA3's switches.
// FA3's mainloop walks the K/V blocks from the last down: step 1 is j = 2, step 2 j = 1, step 3 j = 0.
Problem small_v3() {
  Config c = test::small(Algo::v3, 100, 40, 16, 128, 16);
  c.scheduler = TileScheduler::grid;
  return resolve(c);
}

std::vector<Event> step_events(const std::vector<Event>& all, std::uint32_t step) {
  std::vector<Event> v;
  std::copy_if(all.begin(), all.end(), std::back_inserter(v), [step](const Event& e) { return e.step == step; });
  return v;
}

const Event* find(const std::vector<Event>& v, Op op, Tensor t, Eq eq, std::uint8_t agent, std::int32_t j) {
  const auto it = std::find_if(v.begin(), v.end(), [&](const Event& e) {
    return e.op == op && e.tensor == t && e.eq == eq && e.agent == agent && e.j == j;
  });
  return it == v.end() ? nullptr : &*it;
}

const Event* find(std::vector<Event>&&, Op, Tensor, Eq, std::uint8_t, std::int32_t) = delete;  // not a temporary

constexpr std::uint8_t P = kAgentProducer, W0 = kAgentConsumer, W1 = kAgentConsumer + 1;

}  // namespace

TEST_CASE("V3, one Q block, three K/V blocks: events per step counted by hand") {
  const Problem p = small_v3();
  REQUIRE(p.consumer_groups() == 2);
  const std::vector<Event> ev = record_trace(p, TraceLevel::block).events;
  // step 0 (Q_i): load Q, arrive Q (producer), wait Q and init_stats per warpgroup: 2 + 2 x 2 = 6.
  // a tile: the producer's wait empty / load / arrive full for K and V (6); per warpgroup wait K,
  // ping-pong wait, GEMM0, commit, ping-pong arrive, wait GEMM0, release K, softmax (8 x 2 = 16),
  // and from the second tile on the previous tile's deferred GEMM1 (wait V, GEMM1, commit, wait,
  // release V: 5 x 2 = 10). The outer end: the last tile's 10, finalize, store O, store L (3 x 2).
  CHECK(step_events(ev, 0).size() == 6);
  CHECK(step_events(ev, 1).size() == 22);
  CHECK(step_events(ev, 2).size() == 32);
  CHECK(step_events(ev, 3).size() == 32);
  CHECK(step_events(ev, 4).size() == 16);
  CHECK(ev.size() == 6 + 22 + 32 + 32 + 16);
  for (const Event& e : ev) CHECK(e.agent != kAgentBlock);  // every event has its issuer
}

TEST_CASE("V3: warpgroups own 64 rows each, their stores split O_i's bytes by rows") {
  const std::vector<Event> ev = record_trace(small_v3(), TraceLevel::block).events;
  const std::vector<Event> end = step_events(ev, 4);
  const Event* o0 = find(end, Op::store, Tensor::O, Eq::none, W0, -1);
  const Event* o1 = find(end, Op::store, Tensor::O, Eq::none, W1, -1);
  REQUIRE(o0);
  REQUIRE(o1);
  CHECK(o0->rows == 64);
  CHECK(o1->rows == 36);
  CHECK(o0->bytes == 64 * 16 * 2);
  CHECK(o1->bytes == 36 * 16 * 2);
  const std::vector<Event> s0_events = step_events(ev, 0), s1_events = step_events(ev, 1);
  const Event* q = find(s0_events, Op::load, Tensor::Q, Eq::none, P, -1);
  REQUIRE(q);
  CHECK(q->bytes == 100 * 16 * 2);  // the producer's one TMA load of the whole Q block
  const Event* s0 = find(s1_events, Op::compute, Tensor::none, Eq::scores, W1, 2);  // the first block walked
  REQUIRE(s0);
  CHECK(s0->rows == 36);
  CHECK(s0->cols == 8);  // the ragged last K/V block
}

TEST_CASE("V3: the stage ring's stage and phase, the producer's empty waits a phase ahead") {
  const std::vector<Event> ev = record_trace(small_v3(), TraceLevel::block).events;
  // 2 stages; the k-th K/V block the thread block walks (j = 2, 1, 0) sits in stage k mod 2, phase
  // (k / 2) mod 2: j = 0, walked third (k = 2), in stage 0, phase 1
  const std::vector<Event> s2 = step_events(ev, 2), s3 = step_events(ev, 3);
  const Event* full2 = find(s3, Op::wait, Tensor::K, Eq::stage_full, W0, 0);
  REQUIRE(full2);
  CHECK(full2->rows == 0);  // stage 2 mod 2
  CHECK(full2->cols == 1);  // phase 2 / 2
  const Event* empty2 = find(s3, Op::wait, Tensor::K, Eq::stage_empty, P, 0);
  REQUIRE(empty2);
  CHECK(empty2->cols == 0);  // the producer's phase starts at 1: 1 xor 1
  const Event* empty1 = find(s2, Op::wait, Tensor::V, Eq::stage_empty, P, 1);
  REQUIRE(empty1);
  CHECK(empty1->rows == 1);
  CHECK(empty1->cols == 1);
  // the deferred GEMM1 of block 1 in step 3 waits for V_1 in stage 1, phase 0
  const Event* v1 = find(s3, Op::wait, Tensor::V, Eq::stage_full, W1, 1);
  REQUIRE(v1);
  CHECK(v1->rows == 1);
  CHECK(v1->cols == 0);
}

TEST_CASE("V3 intra-warpgroup overlap: GEMM1 of block j after GEMM0 of block j + 1, the last in the outer end") {
  const std::vector<Event> ev = record_trace(small_v3(), TraceLevel::block).events;
  const std::vector<Event> s2 = step_events(ev, 2);
  const auto at = [&](Op op, Eq eq, std::int32_t j) {
    return std::find_if(s2.begin(), s2.end(), [&](const Event& e) { return e.op == op && e.eq == eq && e.j == j && e.agent == W0; }) - s2.begin();
  };
  // step 2 walks j = 1, after j = 2
  CHECK(at(Op::compute, Eq::scores, 1) < at(Op::compute, Eq::output_v2, 2));     // GEMM0(1), then GEMM1(2)
  CHECK(at(Op::compute, Eq::output_v2, 2) < at(Op::compute, Eq::softmax_v2, 1));  // softmax(1) overlaps it
  const std::vector<Event> s1 = step_events(ev, 1), s4 = step_events(ev, 4);
  CHECK(find(s1, Op::compute, Tensor::none, Eq::output_v2, W0, 2) == nullptr);  // none at first
  const Event* last = find(s4, Op::compute, Tensor::none, Eq::output_v2, W0, 0);  // j = 0, walked last
  REQUIRE(last);
  CHECK(last->cols == 16);
  // ping-pong: warpgroup k waits on its own named barrier and arrives on the next one's
  const Event* own = find(s2, Op::wait, Tensor::none, Eq::none, W1, 1);
  const Event* next = find(s2, Op::arrive, Tensor::none, Eq::none, W1, 1);
  REQUIRE(own);
  REQUIRE(next);
  CHECK(own->rows == 1);
  CHECK(next->rows == 0);
}

TEST_CASE("V3 without overlap, ping-pong or warp specialization: GEMM1 in its own step, warpgroup 0 loads") {
  Config c = test::small(Algo::v3, 100, 40, 16, 128, 16);
  c.intra_overlap = false;
  c.pingpong = false;
  c.warp_specialize = false;
  const std::vector<Event> ev = record_trace(resolve(c), TraceLevel::block).events;
  // a tile: 6 loader events and per warpgroup wait K, GEMM0, commit, wait, release K, softmax,
  // wait V, GEMM1, commit, wait, release V (11 x 2); the outer end 3 x 2
  CHECK(step_events(ev, 1).size() == 28);
  CHECK(step_events(ev, 4).size() == 6);
  for (const Event& e : ev) CHECK(e.agent != kAgentProducer);
  const std::vector<Event> s1 = step_events(ev, 1);
  CHECK(find(s1, Op::load, Tensor::K, Eq::none, W0, 2) != nullptr);
}

TEST_CASE("V3 traces: the agent survives the text and binary forms, and V1 and V2 keep agent 0") {
  const Trace t = record_trace(small_v3(), TraceLevel::block);
  for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
    const Trace back = decode_trace(encode_trace(t, f));
    REQUIRE(back.events.size() == t.events.size());
    for (std::size_t k = 0; k < t.events.size(); ++k) CHECK(same_event(back.events[k], t.events[k]));
  }
  CHECK(encode_trace(t, TraceFormat::text).find(" stage_full producer\n") != std::string::npos);
  for (Algo a : {Algo::v1, Algo::v2}) {
    const Trace v = record_trace(resolve(test::small(a, 100, 40, 16, 32, 16)), TraceLevel::warp);
    for (const Event& e : v.events) CHECK(e.agent == kAgentBlock);
  }
}

TEST_CASE("V3 traces: an agent beyond the config's warpgroups is refused, naming the field") {
  const Trace t = record_trace(small_v3(), TraceLevel::block);  // 2 consumer warpgroups: agents 1 to 3
  Trace bad = t;
  bad.events[0].agent = kAgentConsumer + 2;
  test::rejects(encode_trace(bad, TraceFormat::binary), "agent = 4: 1 (producer) to 3 (consumer warpgroups 0 to 1)");
  std::string text = encode_trace(t, TraceFormat::text);
  const std::size_t at = text.find(" producer\n");
  REQUIRE(at != std::string::npos);
  text.replace(at, 10, " worker\n");
  test::rejects(text, "end of line = worker: no more fields, or the agent (format 6)");
}
