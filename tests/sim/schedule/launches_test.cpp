// Schedules as data (schedule.hpp): a toy two-launch schedule, the shape of a backward pass
// (a preprocess launch over Q blocks writing a statistic, then a main launch with one thread block
// per K/V block walking the Q blocks in descending order), walked by the one executor. Counts,
// grids, SRAM and the step stream are derived by hand below. Then the three forward schedules'
// launches and where their tiles live, and the schedule checks.
#include <doctest/doctest.h>

#include <stdexcept>
#include <tuple>
#include <vector>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/executor/sector_counter.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "../../common/config_helpers.hpp"

using namespace flashlab;

namespace {

Action load(Tensor t, Region r, bool if_visited = false) { return {Op::load, t, r, Eq::none, if_visited}; }
Action store(Tensor t, Region r) { return {Op::store, t, r, Eq::none, false}; }

Schedule toy() {
  Launch pre;
  pre.name = "preprocess";
  pre.loops = {{Dim::batch, true}, {Dim::head, true}, {Dim::q_block, true}};
  pre.outer_begin = {load(Tensor::O, Region::q_block), store(Tensor::l, Region::q_block)};  // D_i = rowsum(dO o O)
  pre.placement = {{Tensor::O, Memory::registers}, {Tensor::l, Memory::registers}};

  Launch main;
  main.name = "main";
  main.loops = {{Dim::batch, true}, {Dim::head, true}, {Dim::kv_block, true}, {Dim::q_block, false, Order::descending}};
  main.outer_begin = {load(Tensor::K, Region::kv_block, true), load(Tensor::V, Region::kv_block, true)};
  main.body = {load(Tensor::Q, Region::q_block), load(Tensor::l, Region::q_block),
               {Op::compute, Tensor::none, Region::none, Eq::scores, false}};
  main.placement = {{Tensor::Q, Memory::sram}, {Tensor::K, Memory::sram}, {Tensor::V, Memory::sram},
                    {Tensor::l, Memory::registers}};
  return {{pre, main}};
}

// N_q = 100, N_k = 70, d = 8, B_r = 32, B_c = 16, fp16, batch 2, heads 3, no mask:
// T_r = 4 (rows 32, 32, 32, 4), T_c = 5 (cols 16, 16, 16, 16, 6), 6 (batch, head) pairs.
Problem toy_problem() {
  Config c = test::small(Algo::v2, 100, 70, 8, 32, 16);
  c.batch = 2;
  c.heads = 3;
  return resolve(c);
}

struct Seen {
  std::uint16_t launch;
  std::uint32_t block, step;
  Level level;
  std::int64_t i, j;
  bool operator==(const Seen&) const = default;
};

class Recorder : public StepObserver {
 public:
  void on_step(const StepView& s) override { seen.push_back({s.launch, s.block, s.step, s.level, s.i, s.j}); }
  std::vector<Seen> seen;
};

}  // namespace

TEST_CASE("a toy two-launch schedule: counts, grids, SRAM and steps by hand") {
  const Problem p = toy_problem();
  Executor e(p, toy());
  SectorCounter sectors(p, e.schedule());
  e.add_level(&sectors);
  Recorder rec;
  e.add_observer(&rec);
  e.run();
  const Counters k = e.counters();
  const std::uint64_t bh = 6, e_in = 2;

  REQUIRE(k.launches.size() == 2);
  const LaunchCounters& pre = k.launches[0];
  const LaunchCounters& main = k.launches[1];
  CHECK(pre.name == "preprocess");
  CHECK(main.name == "main");
  // grids: T_r = 4 thread blocks per (batch, head) for the preprocess, T_c = 5 for the main launch
  CHECK(pre.grid == 4 * 6);
  CHECK(main.grid == 5 * 6);
  CHECK(k.grid_blocks == 9 * 6);
  // preprocess: O read once (N_q d e_in), the statistic written once (N_q fp32)
  CHECK(pre.cost.bytes(Tensor::O, Dir::read) == bh * 100 * 8 * e_in);
  CHECK(pre.cost.bytes(Tensor::l, Dir::write) == bh * 100 * 4);
  CHECK(pre.cost.read_bytes() + pre.cost.write_bytes() == bh * (1600 + 400));
  // main: K_j and V_j once per thread block (N_k d e_in each); Q_i and l_i once per tile, so T_c
  // times N_q rows; S = Q K^T on every tile: 2 N_q N_k d FLOPs and N_q N_k scaling muls
  CHECK(main.cost.bytes(Tensor::K, Dir::read) == bh * 70 * 8 * e_in);
  CHECK(main.cost.bytes(Tensor::V, Dir::read) == bh * 70 * 8 * e_in);
  CHECK(main.cost.bytes(Tensor::Q, Dir::read) == bh * 5 * 100 * 8 * e_in);
  CHECK(main.cost.bytes(Tensor::l, Dir::read) == bh * 5 * 100 * 4);
  CHECK(main.cost.write_bytes() == 0);
  CHECK(main.cost.flops == bh * 2 * 100 * 70 * 8);
  CHECK(main.cost.op(OpKind::mul) == bh * 100 * 70);
  // the totals are the sums of the launches
  CHECK(k.cost.read_bytes() == pre.cost.read_bytes() + main.cost.read_bytes());
  CHECK(k.cost.write_bytes() == pre.cost.write_bytes() + main.cost.write_bytes());
  CHECK(k.tiles.total == bh * 20);
  CHECK(k.tiles.visited == bh * 20);
  // where tiles live: loads land in SRAM (Q, K, V) or registers (O, l), the store leaves registers
  CHECK(k.bytes(Memory::sram, Tensor::Q, Dir::write) == main.cost.bytes(Tensor::Q, Dir::read));
  CHECK(k.bytes(Memory::sram, Tensor::K, Dir::write) == main.cost.bytes(Tensor::K, Dir::read));
  CHECK(k.bytes(Memory::registers, Tensor::O, Dir::write) == pre.cost.bytes(Tensor::O, Dir::read));
  CHECK(k.bytes(Memory::registers, Tensor::l, Dir::read) == bh * 100 * 4);
  CHECK(k.bytes(Memory::registers, Tensor::l, Dir::write) == bh * 5 * 100 * 4);
  CHECK(k.bytes(Memory::sram, Tensor::O, Dir::write) == 0);
  // sectors: rows of 16 bytes; Q_i of 32 rows is 512 bytes from a multiple of 512 within the head
  // (head stride 1600 = 32 * 50, so sector-aligned): exact. The last Q block (4 rows, 64 bytes at
  // 96 * 16 = 1536) is aligned too; l rows of 4 bytes: head h starts at 400 h, a multiple of 16.
  CHECK(k.sectors);
  CHECK(k.bytes(Memory::sector, Tensor::Q, Dir::read) == k.bytes(Memory::hbm, Tensor::Q, Dir::read));
  // SRAM: the main launch holds Q_i, K_j, V_j: (32 d + 2 * 16 d) e_in; the preprocess nothing
  CHECK(main.sram_peak_bytes == (32 * 8 + 2 * 16 * 8) * 2);
  CHECK(pre.sram_peak_bytes == 0);
  CHECK(k.sram_peak_bytes == main.sram_peak_bytes);

  // Steps of one (batch, head): 4 preprocess steps (block i, step 0), then per K/V block j its
  // thread block j: the K_j, V_j step and its 4 tiles, i = 3, 2, 1, 0. Block j < 4 ran a
  // preprocess step already, so its steps go on from 1; block 4 starts at 0.
  std::vector<Seen> want;
  for (std::uint32_t i = 0; i < 4; ++i) want.push_back({0, i, 0, Level::outer_begin, i, -1});
  for (std::uint32_t j = 0; j < 5; ++j) {
    std::uint32_t step = j < 4 ? 1 : 0;
    want.push_back({1, j, step++, Level::outer_begin, -1, j});
    for (std::int64_t i = 3; i >= 0; --i) want.push_back({1, j, step++, Level::inner, i, j});
  }
  CHECK(rec.seen == want);
  CHECK(k.steps == want.size());
}

TEST_CASE("the toy schedule's sector level against its rows by hand: statistics off sector boundaries") {
  // Same schedule, N_q = 10, B_r = 4: l_i rows of 4 bytes; (batch, head) h starts at byte 40 h.
  // Each l_i run is one request (at most 32 rows). Preprocess writes l_0 (16 B), l_1 (16 B), l_2
  // (8 B) per head at offsets 40 h + {0, 16, 32}.
  Config c = test::small(Algo::v2, 10, 16, 16, 4, 16);
  c.heads = 4;
  const Problem p = resolve(c);
  Executor e(p, toy());
  SectorCounter sectors(p, e.schedule());
  e.add_level(&sectors);
  e.run();
  const Counters k = e.counters();
  // sectors touched by [a, a + n): brute force over the heads
  std::uint64_t want = 0;
  for (std::uint64_t h = 0; h < 4; ++h)
    for (std::uint64_t i = 0; i < 3; ++i) {
      const std::uint64_t a = 40 * h + 16 * i, n = i < 2 ? 16 : 8;
      want += ((a + n - 1) / 32 - a / 32 + 1) * 32;
    }
  // head 0: [0,16) 32, [16,32) 32, [32,40) 32; head 1: [40,56) 32, [56,72) 64, [72,80) 32; ...
  CHECK(want == 4 * 96 + 2 * 32);  // heads 1 and 3 each have one run across a sector boundary
  CHECK(k.bytes(Memory::sector, Tensor::l, Dir::write) == want);
  CHECK(k.bytes(Memory::hbm, Tensor::l, Dir::write) == 4 * 10 * 4);
}

TEST_CASE("the forward schedules' launches: names, grids, thread blocks and dispatch order") {
  Config c;
  c.n_q = 1000;
  c.n_k = 700;
  c.d = 64;
  c.b_r = c.b_c = 64;  // T_r = 16, T_c = 11
  c.batch = 2;
  c.heads = 3;
  c.algo = Algo::standard;
  Counters k = count(resolve(c));
  REQUIRE(k.launches.size() == 3);  // kernels/src/standard.cu: grids (T_r, bh), (N_q, bh), (T_r, bh)
  CHECK(k.launches[0].name == "standard_scores");
  CHECK(k.launches[0].grid == 16 * 6);
  CHECK(k.launches[1].name == "standard_softmax");
  CHECK(k.launches[1].grid == 1000 * 6);
  CHECK(k.launches[2].name == "standard_output");
  CHECK(k.launches[2].grid == 16 * 6);
  // Algorithm 0 line by line: S = QK^T reads Q, K and writes S; the softmax reads S, writes P;
  // PV reads P, V and writes O
  const std::uint64_t q = 6 * 1000 * 64 * 2, kv = 6 * 700 * 64 * 2, s = 6 * 1000 * 700 * 2;
  CHECK(k.launches[0].cost.read_bytes() == q + kv);
  CHECK(k.launches[0].cost.write_bytes() == s);
  CHECK(k.launches[1].cost.read_bytes() == s);
  CHECK(k.launches[1].cost.write_bytes() == s);
  CHECK(k.launches[2].cost.read_bytes() == s + kv);
  CHECK(k.launches[2].cost.write_bytes() == q);
  CHECK(k.steps == 3);

  c.algo = Algo::v1;
  k = count(resolve(c));
  REQUIRE(k.launches.size() == 1);
  CHECK(k.launches[0].grid == 6);  // one thread block per (batch, head)
  c.algo = Algo::v2;
  k = count(resolve(c));
  REQUIRE(k.launches.size() == 1);
  CHECK(k.launches[0].grid == 16 * 6);  // one per Q block

  // V2's blockIdx.x is the Q block: the thread-block loops are batch, head, Q block, in that order
  const Schedule v2_schedule = detail::make_schedule(Algo::v2);
  const Launch& v2 = v2_schedule.launches[0];
  REQUIRE(v2.loops.size() == 4);
  CHECK((v2.loops[2].dim == Dim::q_block && v2.loops[2].thread_block));
  CHECK((v2.loops[3].dim == Dim::kv_block && !v2.loops[3].thread_block));
}

TEST_CASE("where tiles live: SRAM bytes of V1 (S_ij in SRAM), V2 (S_ij, O_i in registers), standard") {
  // B_r = 64, B_c = 32, d = 128, e_in = 2
  const std::int64_t q = 64 * 128 * 2, kv = 32 * 128 * 2, s = 64 * 32 * 2;
  CHECK(sram_bytes(detail::make_schedule(Algo::v1), 64, 32, 128, 2) == q + 2 * kv + s);
  CHECK(sram_bytes(detail::make_schedule(Algo::v2), 64, 32, 128, 2) == q + 2 * kv);
  CHECK(sram_bytes(detail::make_schedule(Algo::standard), 64, 32, 128, 2) == q + kv + s);  // its S = QK^T launch
  CHECK(placement_of(detail::make_schedule(Algo::v2).launches[0], Tensor::O) == Memory::registers);
  CHECK(placement_of(detail::make_schedule(Algo::v1).launches[0], Tensor::S) == Memory::sram);
}

TEST_CASE("FA2's d = 256 forward with 64 x 64 tiles fits 101,376 bytes of shared memory, V1's does not") {
  // V2: Q_i, K_j, V_j = 3 * 64 * 256 * 2 = 98,304 bytes. V1 adds S_ij: 64 * 64 * 2 = 8,192 more.
  Config c;
  c.d = 256;
  c.b_r = c.b_c = 64;
  c.sram_bytes = 101'376;
  c.algo = Algo::v2;
  const Counters k = count(resolve(c));
  CHECK(k.sram_peak_bytes == 98'304);
  c.algo = Algo::v1;
  CHECK_THROWS_AS(resolve(c), ConfigError);
}

TEST_CASE("schedules that cannot be walked are refused, naming the launch and the rule") {
  const Problem p = toy_problem();
  auto refused = [&](Schedule s, const char* words) {
    try {
      Executor e(p, std::move(s));
    } catch (const std::logic_error& err) {
      INFO(std::string(err.what()));
      CHECK(std::string(err.what()).find(words) != std::string::npos);
      return;
    }
    FAIL("accepted a schedule that cannot be walked: " << words);
  };
  Schedule s = toy();
  s.launches[1].loops = {{Dim::batch, true}, {Dim::q_block, false}, {Dim::kv_block, true}};
  refused(s, "a thread-block loop comes after a sequential loop");
  s = toy();
  s.launches[1].loops = {{Dim::kv_block, true}};
  refused(s, "a body needs two tile loops");
  s = toy();
  s.launches[1].placement.clear();
  refused(s, "tensor K is moved but has no placement");
  s = toy();
  s.launches[0].outer_begin.push_back(load(Tensor::K, Region::kv_block));
  s.launches[0].placement.push_back({Tensor::K, Memory::sram});
  refused(s, "a kv_block region needs K/V block j");
  s = toy();
  s.launches[0].loops.push_back({Dim::q_block, false});
  refused(s, "a dimension appears twice");
  CHECK_THROWS_AS((void)Executor(p, Schedule{}), std::logic_error);
}
