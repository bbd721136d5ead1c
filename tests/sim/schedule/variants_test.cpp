// The switches from V1 to V2 as one schedule builder (schedule.hpp make_schedule, docs/model.md
// "Variants"): the presets are the two corners, each switch overrides one property, the loop
// nests and launches of each (order, grid, rescale), where S_ij lives, and the names and errors of
// the switches.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/schedule/schedule.hpp"

using namespace flashlab;

namespace {

bool has(const std::vector<Action>& acts, Op op, Tensor t) {
  for (const Action& a : acts)
    if (a.op == op && a.tensor == t) return true;
  return false;
}

bool has_eq(const std::vector<Action>& acts, Eq e) {
  for (const Action& a : acts)
    if (a.op == Op::compute && a.eq == e) return true;
  return false;
}

// "b h ; j i": thread-block loops, then sequential ones.
std::string nest(const Launch& l) {
  std::string s;
  bool seq = false;
  for (const Loop& x : l.loops) {
    if (!x.thread_block && !seq) s += ";", seq = true;
    static const char* names[] = {"b", "h", "i", "j", "row"};
    s += std::string(s.empty() || s.back() == ';' ? "" : " ") + names[int(x.dim)];
  }
  return s;
}

}  // namespace

TEST_CASE("variants: the presets are the two corners, and each switch overrides one property") {
  const Switches v1 = preset_switches(Algo::v1), v2 = preset_switches(Algo::v2);
  CHECK(v1 == Switches{LoopOrder::kv_outer, GridKind::head, Rescale::step, WarpSplit::split_k, false});
  CHECK(v2 == Switches{LoopOrder::q_outer, GridKind::q_block, Rescale::delayed, WarpSplit::split_q, true});

  Config c;
  c.algo = Algo::v1;
  CHECK(resolve(c).switches() == v1);
  CHECK(resolve(c).is_preset());
  c.grid = GridKind::q_block;
  Problem p = resolve(c);
  CHECK(p.switches() == Switches{LoopOrder::kv_outer, GridKind::q_block, Rescale::step, WarpSplit::split_k, false});
  CHECK_FALSE(p.is_preset());
  c = Config{};
  c.algo = Algo::v2;
  c.rescale = Rescale::step;
  p = resolve(c);
  CHECK(p.switches() == Switches{LoopOrder::q_outer, GridKind::q_block, Rescale::step, WarpSplit::split_q, true});
  // standard attention walks no tiles: it is always "its preset", and refuses a switch given
  c = Config{};
  c.algo = Algo::standard;
  CHECK(resolve(c).is_preset());
  c.order = LoopOrder::kv_outer;
  CHECK_THROWS_WITH_AS(resolve(c),
                       "order = kv-outer: none with --algo standard: it is a switch of --algo v1 and v2 (standard "
                       "attention walks no tiles: it has no loop order, grid, rescaling or warp split to change)",
                       ConfigError);
}

TEST_CASE("variants: the preset schedules are V1's and V2's, launch for launch") {
  const Schedule v1 = detail::make_schedule(Algo::v1), v2 = detail::make_schedule(Algo::v2);
  REQUIRE(v1.launches.size() == 1);
  REQUIRE(v2.launches.size() == 1);
  CHECK(v1.launches[0].name == "v1_forward");
  CHECK(v2.launches[0].name == "v2_forward");
  CHECK(nest(v1.launches[0]) == "b h;j i");
  CHECK(nest(v2.launches[0]) == "b h i;j");
  // V1: line 2 in the prologue, K_j, V_j at the outer level, Q_i O_i l_i m_i and the stores per tile
  CHECK(has(v1.launches[0].prologue[0], Op::store, Tensor::O));
  CHECK(has(v1.launches[0].outer_begin, Op::load, Tensor::K));
  CHECK(has(v1.launches[0].body, Op::load, Tensor::Q));
  CHECK(has(v1.launches[0].body, Op::store, Tensor::m));
  CHECK(has_eq(v1.launches[0].body, Eq::output_v1));
  // V2: Q_i at the outer level, K_j V_j per tile, O_i L_i at the end
  CHECK(has(v2.launches[0].outer_begin, Op::load, Tensor::Q));
  CHECK(has(v2.launches[0].body, Op::load, Tensor::K));
  CHECK(has(v2.launches[0].outer_end, Op::store, Tensor::L));
  CHECK(has_eq(v2.launches[0].outer_end, Eq::finalize_v2));
  // make_schedule(algo) is the builder at the preset's switches; v1 with V2's switches is V2
  CHECK(detail::make_schedule(Algo::v1, preset_switches(Algo::v2)).launches[0].name == "v2_forward");
  CHECK(detail::make_schedule(Algo::v2, preset_switches(Algo::v1)).launches[0].name == "v1_forward");
}

TEST_CASE("variants: loop nests, levels and launches of every order, grid and rescale") {
  for (LoopOrder o : {LoopOrder::kv_outer, LoopOrder::q_outer})
    for (GridKind g : {GridKind::head, GridKind::q_block})
      for (Rescale r : {Rescale::step, Rescale::delayed}) {
        CAPTURE(to_string(o));
        CAPTURE(to_string(g));
        CAPTURE(to_string(r));
        const Switches v{o, g, r, WarpSplit::split_q, true};
        const Schedule s = detail::make_schedule(Algo::v1, v);
        CHECK_NOTHROW(check_schedule(s));
        const Launch& l = s.launches[0];
        const bool kv = o == LoopOrder::kv_outer, q_grid = g == GridKind::q_block, step = r == Rescale::step;
        // the Q block in the grid: i is a thread-block loop and j inside it, whatever the order
        CHECK(nest(l) == (q_grid ? "b h i;j" : kv ? "b h;j i" : "b h;i j"));
        // O_i, l_i, m_i through HBM at every step exactly for the K/V outer order
        CHECK(has(l.body, Op::load, Tensor::O) == kv);
        CHECK(has(l.body, Op::store, Tensor::O) == kv);
        CHECK(has(l.body, Op::store, Tensor::m) == kv);
        CHECK(has(l.outer_end, Op::store, Tensor::L) == !kv);  // L saved by the Q outer order
        // Q_i per tile only with one thread block per head walking j outside
        CHECK(has(l.body, Op::load, Tensor::Q) == (kv && !q_grid));
        CHECK(has(l.body, Op::load, Tensor::K) == (!kv || q_grid));
        // the rescale picks the equations; the end of a Q block does what is left
        CHECK(has_eq(l.body, step ? Eq::softmax_v1 : Eq::softmax_v2));
        CHECK(has_eq(l.body, step ? Eq::output_v1 : Eq::output_v2));
        const bool second_pass = kv && !q_grid && !step;
        CHECK(s.launches.size() == (second_pass ? 2u : 1u));
        if (second_pass) {
          CHECK(s.launches[1].name == "flash_normalize");
          CHECK(nest(s.launches[1]) == "b h;i");
          CHECK(has(s.launches[1].outer_begin, Op::load, Tensor::O));
          CHECK(has(s.launches[1].outer_begin, Op::load, Tensor::l));
          CHECK(has_eq(s.launches[1].outer_begin, Eq::normalize));
        }
        if (kv && q_grid && !step) CHECK(has_eq(l.outer_end, Eq::normalize));
        // line 2 (O, l, m initialised in HBM): once, whole, before the loops with one thread block
        // per head; by each Q block's thread block for its own rows with the Q block in the grid
        CHECK(l.prologue.size() == (kv && !q_grid ? 1u : 0u));
        CHECK(has(l.outer_begin, Op::store, Tensor::O) == (kv && q_grid));
        CHECK(has(l.outer_begin, Op::store, Tensor::m) == (kv && q_grid));
        if (!kv) CHECK(has_eq(l.outer_end, step ? Eq::logsumexp : Eq::finalize_v2));
        // S_ij in SRAM with the K/V outer order (FA1 Alg. 1 as written), in registers with Q outer
        CHECK(placement_of(l, Tensor::S) == (kv ? Memory::sram : Memory::registers));
      }
}

TEST_CASE("variants: the SRAM check follows the order (S_ij in SRAM for kv-outer)") {
  // FA2's d = 256 forward, 64 x 64 tiles, fp16, 101,376 bytes: Q_i + K_j + V_j = 98,304 bytes
  // fit; with S_ij (64 x 64 x 2 = 8,192 bytes) they do not.
  Config c;
  c.d = 256;
  c.b_r = c.b_c = 64;
  c.sram_bytes = 101'376;
  c.algo = Algo::v1;
  CHECK_THROWS_AS(resolve(c), ConfigError);
  c.order = LoopOrder::q_outer;
  CHECK_NOTHROW(resolve(c));
  c.algo = Algo::v2;
  c.order = LoopOrder::kv_outer;
  CHECK_THROWS_AS(resolve(c), ConfigError);
}

TEST_CASE("variants: the grid's thread blocks, per launch") {
  Config c;
  c.n_q = c.n_k = 1000;
  c.d = 64;
  c.b_r = c.b_c = 64;  // T_r = 16
  c.batch = 2;
  c.heads = 3;
  c.algo = Algo::v1;
  CHECK(count(resolve(c)).launches[0].grid == 6);
  c.grid = GridKind::q_block;
  CHECK(count(resolve(c)).launches[0].grid == 6 * 16);
  c.algo = Algo::v2;
  c.grid = GridKind::head;
  CHECK(count(resolve(c)).launches[0].grid == 6);
}

TEST_CASE("variants: names and errors of the switches") {
  CHECK(parse_order("kv-outer") == LoopOrder::kv_outer);
  CHECK(parse_order("q-outer") == LoopOrder::q_outer);
  CHECK(parse_grid("head") == GridKind::head);
  CHECK(parse_grid("qblock") == GridKind::q_block);
  CHECK(parse_rescale("step") == Rescale::step);
  CHECK(parse_rescale("delayed") == Rescale::delayed);
  CHECK(parse_block_skip("on"));
  CHECK_FALSE(parse_block_skip("off"));
  for (LoopOrder o : {LoopOrder::kv_outer, LoopOrder::q_outer}) CHECK(parse_order(to_string(o)) == o);
  for (GridKind g : {GridKind::head, GridKind::q_block}) CHECK(parse_grid(to_string(g)) == g);
  for (Rescale r : {Rescale::step, Rescale::delayed}) CHECK(parse_rescale(to_string(r)) == r);
  const auto message = [](auto f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message([] { parse_order("kv"); }) == "order = kv: one of kv-outer, q-outer");
  CHECK(message([] { parse_grid("block"); }) == "grid = block: one of head, qblock");
  CHECK(message([] { parse_rescale("lazy"); }) == "rescale = lazy: one of step, delayed");
  CHECK(message([] { parse_block_skip("yes"); }) == "block-skip = yes: one of on, off");
}
