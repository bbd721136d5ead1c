// The time model's mechanisms (sim/src/time/time_model.cpp): launch overhead, wave quantization,
// idle SMs, uneven causal blocks, and the step rule for a block alone on its SM.
#include <doctest/doctest.h>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/time/time_model.hpp"
#include "../../common/config_helpers.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;

namespace {

Problem make(Algo a, std::int64_t n, std::int64_t br, std::int64_t bc, int warps, std::int64_t heads, Mask mask = {}) {
  Config c = test::small(a, n, n, 64, br, bc, mask);
  c.warps = warps;
  c.heads = heads;
  return resolve(c);
}

}  // namespace

TEST_CASE("every launch pays the measured launch overhead, standard attention has three") {
  const double launch_s = gpu_preset("h200").launch_s.value();
  const Modelled s = model(make(Algo::standard, 64, 64, 64, 4, 1));
  REQUIRE(s.time.launches.size() == 3);
  for (const LaunchTime& l : s.time.launches) CHECK(l.time_s >= launch_s);
  CHECK(s.time.time_s >= 3 * launch_s);
  const Modelled v2 = model(make(Algo::v2, 64, 64, 64, 4, 1));
  CHECK(v2.time.time_s == flashlab::testing::approx(v2.time.launches[0].blocks_s + launch_s));
}

TEST_CASE("step_time: units overlap as far as independent streams allow, loads wait a round trip") {
  // closed forms of time_model.hpp's rules with parameters chosen here (not the fitted ones)
  const TimeParams p{.overlap = 0.5, .warp_stream = 0.25, .latency_s = 1.0};
  StepWork w;
  w.unit[int(HwUnit::tensor)] = 3;
  w.unit[int(HwUnit::sfu)] = 1;
  w.unit[int(HwUnit::smem)] = 1;
  // one 4-warp block: 1 stream, rho = 0.5: 3 + 0.5 x 2
  CHECK(step_time(w, p).time == flashlab::testing::approx(4.0));
  // two 8-warp blocks: 2 + 0.25 x 1 = 2.25 streams (a block's second warp per scheduler adds beta
  // to the SM, not to each block), rho = 0.5 / 2.25 = 2 / 9; each block waits for the other
  w.sharing = 2;
  w.warps = 8;
  CHECK(step_time(w, p).time == flashlab::testing::approx(2 * (3 + 2.0 / 9 * 2)));
  // a row launch: its units do not overlap within a block (its phases are between barriers), so a
  // block takes at least their sum; the blocks sharing the SM overlap one another's as above
  w.no_overlap = true;
  CHECK(step_time(w, p).time == flashlab::testing::approx(2 * (3 + 2.0 / 9 * 2)));
  {
    StepWork one = w;
    one.sharing = 1, one.warps = 4;  // alone: 3 + 0.5 x 2 = 4 overlapped, but its chain takes 5
    CHECK(step_time(one, p).time == flashlab::testing::approx(5.0));
  }
  // shares: what the step spends on each unit, summing to its time
  const StepTime st = step_time(w, p);
  double share = 0;
  for (double x : st.share) share += x;
  CHECK(share == flashlab::testing::approx(st.time));
  // loads: a prefetched step lasts at least one round trip; one that waits for its loads (they
  // start the block, or it stored them) takes its work alone plus trips round trips when that is longer
  StepWork small;
  small.unit[int(HwUnit::tensor)] = 0.25;
  small.loads = true;
  CHECK(step_time(small, p).time == flashlab::testing::approx(1.0));
  small.round_trip = true;
  small.trips = 3;
  CHECK(step_time(small, p).time == flashlab::testing::approx(0.25 + 3.0));
  CHECK(step_time(small, p).unit[int(HwUnit::latency)] == flashlab::testing::approx(3.0));
  small.sharing = 16;  // sixteen blocks of work hide the wait
  CHECK(step_time(small, p).time == flashlab::testing::approx(16 * 0.25));
}

TEST_CASE("a 4-warp block alone on its SM: its shares sum to one, one wave, the launch overhead on top") {
  const Modelled m = model(make(Algo::v2, 256, 64, 64, 4, 1));
  const LaunchTime& l = m.time.launches[0];
  REQUIRE(l.sharing == 1);
  // 4 blocks of 4 steps each, one block per SM: the launch's unit times spread over 132 SMs are
  // 4 blocks' worth; one block's time is its share of them in full
  double shares = 0;
  for (double x : l.share) shares += x;
  CHECK(shares == flashlab::testing::approx(1.0));
  // the launch ends with its blocks (one wave) plus the launch overhead
  CHECK(l.waves == 1);
  CHECK(l.time_s == flashlab::testing::approx(l.blocks_s + gpu_preset("h200").launch_s.value()));
}

TEST_CASE("wave quantization: one head more than the GPU holds takes a second wave, its blocks alone") {
  // V2, N = 4096, 64 x 64 tiles: T_r = 64 blocks per head; 4 blocks per SM -> 528 slots
  const Problem full = make(Algo::v2, 4096, 64, 64, 4, 8);   // 512 blocks: one wave
  const Problem over = make(Algo::v2, 4096, 64, 64, 4, 9);   // 576 blocks: two waves
  const Problem alone = make(Algo::v2, 4096, 64, 64, 4, 2);  // 128 blocks on 132 SMs: one block per SM
  const Modelled a = model(full), b = model(over), c = model(alone);
  REQUIRE(a.time.launches[0].occupancy.slots == 528);
  REQUIRE(c.time.launches[0].sharing == 1);
  CHECK(a.time.launches[0].waves == 1);
  CHECK(b.time.launches[0].waves == 2);
  // the second wave's 48 blocks, fewer than the SMs, go one per SM (block_deal.hpp deal_shared) and
  // run alone, as the 128 blocks of two heads do: the first wave's time plus one block's time alone.
  // Within 15%: lambda scales with each launch's L2 load (a's 512 blocks load the L2 more than b's
  // 576 do over their longer time, so b's first wave ends sooner than a's: 57.7 us of tail here
  // against 64.1 alone); the old deal, a second wave of blocks four to an SM, gave 2 x 146 us
  const double tail = b.time.launches[0].blocks_s - a.time.launches[0].blocks_s;
  CHECK(tail == flashlab::testing::approx(c.time.launches[0].blocks_s).epsilon(0.15));
  CHECK(tail < 0.5 * a.time.launches[0].blocks_s);  // not a second full wave (four blocks per SM)
}

TEST_CASE("SMs idle when the grid is smaller than the GPU: V1 with 16 heads takes as long as with 1") {
  const Modelled one = model(make(Algo::v1, 2048, 64, 64, 4, 1));
  const Modelled sixteen = model(make(Algo::v1, 2048, 64, 64, 4, 16));
  CHECK(sixteen.time.launches[0].grid == 16);
  // within 0.1%: sixteen blocks load the L2 sixteen times as much, which lengthens the round trip
  // (lambda times the launch's load, docs/model.md "Memory latency"): 2.3890 against 2.3880 ms
  CHECK(sixteen.time.launches[0].blocks_s == flashlab::testing::approx(one.time.launches[0].blocks_s).epsilon(1e-3));
  // while V2 spreads the same work over T_r = 32 blocks per head
  const Modelled v2 = model(make(Algo::v2, 2048, 64, 64, 4, 1));
  CHECK(v2.time.time_s < one.time.time_s / 10);
}

TEST_CASE("causal rows differ in length: about half the non-causal time, the longest block sets the end") {
  const Modelled dense = model(make(Algo::v2, 8192, 64, 64, 4, 16));
  const Modelled causal = model(make(Algo::v2, 8192, 64, 64, 4, 16, Mask{MaskKind::causal_tl, 0, 0}));
  const double r = causal.time.launches[0].blocks_s / dense.time.launches[0].blocks_s;
  CHECK(r > 0.45);
  CHECK(r < 0.75);
  CHECK(causal.time.launches[0].sm_busy < dense.time.launches[0].sm_busy + 1e-12);
  // TFLOP/s is the matmul FLOPs over the time
  CHECK(causal.time.tflops == flashlab::testing::approx(double(causal.counters.cost.flops) / causal.time.time_s / 1e12));
}

TEST_CASE("the time model takes any schedule: V1's switches turned one by one to V2's end at V2's prediction") {
  Config c;
  c.algo = Algo::v1;
  c.n_q = c.n_k = 4096;
  c.b_r = c.b_c = 64;
  c.heads = 16;
  const double v1 = model(resolve(c)).time.time_s;
  c.order = LoopOrder::q_outer;
  const double order = model(resolve(c)).time.time_s;
  c.grid = GridKind::q_block;
  const Modelled grid = model(resolve(c));
  c.rescale = Rescale::delayed;
  c.split = WarpSplit::split_q;
  c.block_skip = true;
  const double all = model(resolve(c)).time.time_s;
  Config v2 = c;
  v2.algo = Algo::v2;
  v2.order.reset(), v2.grid.reset(), v2.rescale.reset(), v2.split.reset(), v2.block_skip.reset();
  CHECK(all == flashlab::testing::approx(model(resolve(v2)).time.time_s));
  // the loop order alone keeps one block per head: O stays on chip, the 16 SMs stay alone
  CHECK(order < v1);
  CHECK(order > v1 / 2);
  // one thread block per Q block fills the GPU: 1024 blocks instead of 16
  CHECK(grid.time.launches[0].grid == 1024);
  CHECK(grid.time.time_s < order / 10);
}

TEST_CASE("the row launch: 4-warp blocks holding a row of S as fp32, one latency per 2 KiB of loads in flight") {
  // standard.cu's softmax: 128 threads, SRAM = 4 bytes x N_k (rounded to 8) + 4 x 4 bytes, plus
  // the 1 KiB the driver reserves, against 233,472 bytes per SM; 40 registers per thread for
  // 4 warps: 65,536 / (40 x 32 x 4) = 12 blocks; 64 warps / 4 = 16.
  struct Case {
    std::int64_t n, blocks_per_sm;
  };
  for (const Case c : {Case{32768, 1}, Case{16384, 3}, Case{4096, 12}, Case{1024, 12}}) {
    CAPTURE(c.n);
    const Modelled m = model(make(Algo::standard, c.n, 128, 64, 8, 1));
    const LaunchTime& l = m.time.launches[1];
    REQUIRE(l.name == "standard_softmax");
    CHECK(l.occupancy.smem_per_block == 4 * c.n + 16 + 1024);
    CHECK(l.occupancy.blocks_per_sm == c.blocks_per_sm);
    // one block per SM: it waits for ceil(2 N_k / 2048) round trips and for its row's 2 N_k bytes at
    // 1/132 of the L2's 7,729.1 GB/s; a round trip is a DRAM access's (353.1 ns measured,
    // tests/data/gpu_latency/h200.json: every row of S is read once, so every load misses the L2)
    // plus lambda times the launch's L2 load (0 to 1); unit_s spreads the N_q blocks' latency over
    // 132 SMs (with more blocks per SM the others' work hides part of it)
    const double trips = double((2 * c.n + 2047) / 2048), transfer = 2.0 * double(c.n) / (7729.1e9 / 132);
    const double wait_idle = trips * 353.1e-9 + transfer, wait_full = wait_idle + trips * kFittedTimeParams.latency_s;
    if (c.blocks_per_sm == 1) {
      CHECK(l.unit_s[int(HwUnit::latency)] >= flashlab::testing::approx(double(c.n) * wait_idle / 132));
      CHECK(l.unit_s[int(HwUnit::latency)] <= flashlab::testing::approx(double(c.n) * wait_full / 132));
    } else {
      CHECK(l.unit_s[int(HwUnit::latency)] < double(c.n) * wait_full / 132);
    }
  }
  // one block per SM: the block's units do not overlap, its time is their sum plus its latency
  // (with more blocks per SM they overlap one another's)
  const Modelled m = model(make(Algo::standard, 32768, 128, 64, 8, 1));
  const LaunchTime& l = m.time.launches[1];
  double sum = 0;
  for (int u = 0; u <= int(HwUnit::latency); ++u) sum += l.unit_s[std::size_t(u)];
  const double per_block = sum * 132.0 / 32768.0, waves = 249;  // ceil(32768 / 132)
  CHECK(l.waves == 249);
  CHECK(l.blocks_s == flashlab::testing::approx(waves * per_block));
}

TEST_CASE("the backward's tile: the shared memory of its five matmuls and of dS, its units summed") {
  // V2's released backward, N = 128, one 128 x 128 tile, d = 64, 8 warps, fp16 (grad_grid.cuh: 4
  // groups of 32 keys, 2 warps each): K_j, V_j and Q_i, dO_i copied into SRAM by cp.async, whose
  // fills are not on the shared-memory pipe (not counted); S^T and dP^T: each warp its 32 keys of K_j or V_j and its 64 queries of Q_i or dO_i
  // (2 x 8 x (32 + 64) x 64 x 2); dV and dK: each warp its 32 keys of P^T or dS^T over the 128 queries
  // and its 32 columns of dO_i or Q_i (2 x 8 x (32 x 128 + 128 x 32) x 2); P^T and dS^T written
  // (2 x 128 x 128 x 2); dQ_i on 4 x 2 warps: its 32 rows of dS over the 128 keys and 32 columns of
  // K_j (8 x (32 x 128 + 128 x 32) x 2)
  Config c;
  c.algo = Algo::v2;
  c.pass = Pass::backward;
  c.n_q = c.n_k = 128;
  c.d = 64;
  c.b_r = c.b_c = 128;
  c.warps = 8;
  const Modelled m = model(resolve(c));
  REQUIRE(m.time.launches.size() == 3);
  const LaunchTime& l = m.time.launches[1];
  REQUIRE(l.name == "flash_bwd_dq_dk_dv");
  const double smem = 2 * 8 * (32 + 64) * 64 * 2 + 2 * 8 * (32 * 128 + 128 * 32) * 2 + 2 * 128 * 128 * 2 +
                      8 * (32 * 128 + 128 * 32) * 2;
  CHECK(smem == 655360);
  CHECK(l.unit_s[int(HwUnit::smem)] * 32918e9 == flashlab::testing::approx(smem));
  CHECK(l.unit_s[int(HwUnit::tensor)] * 638.9e12 == flashlab::testing::approx(5.0 * 2 * 128 * 128 * 64));  // five matmuls
  // one block on one SM: its 8 warps overlap its units as a forward tile's do (docs/model.md "Overlap":
  // rho = c / (1 + beta) < 1), so the block takes at least its largest unit and less than their sum
  double sum = 0, top = 0;
  for (int u = 0; u <= int(HwUnit::latency); ++u) {
    sum += l.unit_s[std::size_t(u)];
    top = std::max(top, l.unit_s[std::size_t(u)]);
  }
  CHECK(l.blocks_s >= top * 132);
  CHECK(l.blocks_s < sum * 132);
}
