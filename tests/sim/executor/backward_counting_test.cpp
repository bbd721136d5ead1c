// The backward's counts against closed forms derived from the algorithms' lines (docs/model.md
// "Backward pass"), not from the schedules: N = 1024, d = 64, B_r = B_c = 64 (T_r = T_c = 16), no
// mask, 256 tiles. fp32 makes every element 4 bytes, so bytes / 4 = elements.
#include <doctest/doctest.h>

#include <map>
#include <vector>

#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"

using namespace flashlab;

namespace {

constexpr std::uint64_t N = 1024, d = 64, B = 64, T = N / B, tiles = T * T;

Counters run(Algo a, Pass pass, BackwardForm form = BackwardForm::released, Dtype t = Dtype::fp32, Mask m = {}) {
  Config c;
  c.algo = a;
  c.n_q = c.n_k = std::int64_t(N);
  c.d = std::int64_t(d);
  c.b_r = c.b_c = std::int64_t(B);
  c.dtype = t;
  c.mask = m;
  c.pass = pass;
  c.backward_form = form;
  return count(resolve(c));
}

}  // namespace

// FA1 Alg. 4: line 2 writes dQ, dK, dV (3 N d); line 7 reads K_j, V_j once per j (2 N d); line 10
// reads Q_i, O_i, dO_i, dQ_i (4 B d) and l_i, m_i (2 B) on every tile; line 20 writes dQ_i (B d)
// on every tile; line 23 writes dK_j, dV_j (2 N d).
TEST_CASE("V1 backward (FA1 Alg. 4): reads 2Nd + T_c(4Nd + 2N), writes 3Nd + T_c Nd + 2Nd elements") {
  const Counters k = run(Algo::v1, Pass::backward);
  CHECK(k.cost.read_bytes() == (2 * N * d + tiles * (4 * B * d + 2 * B)) * 4);
  CHECK(k.cost.read_bytes() == 4'358'144ull * 4);
  CHECK(k.cost.write_bytes() == (3 * N * d + tiles * B * d + 2 * N * d) * 4);
  CHECK(k.cost.write_bytes() == 1'376'256ull * 4);
  CHECK(k.cost.bytes(Tensor::dQ, Dir::read) == tiles * B * d * 4);
  CHECK(k.cost.bytes(Tensor::dQ, Dir::write) == (N * d + tiles * B * d) * 4);
  CHECK(k.cost.bytes(Tensor::dK, Dir::write) == 2 * N * d * 4);  // line 2 and line 23
  CHECK(k.cost.bytes(Tensor::m, Dir::read) == tiles * B * 4);
  CHECK(k.cost.atomic_bytes() == 0);
  CHECK(k.launches.size() == 1);
  CHECK(k.grid_blocks == 1);  // one thread block per (batch, head)
}

// FA2 Alg. 2 as printed: lines 3-4 read O, dO (2 N d) and write D (N) and dQ = 0 (N d); line 6
// reads K_j, V_j once per j; line 9 reads Q_i, O_i, dO_i, dQ_i (4 B d) and L_i, D_i (2 B) per tile;
// line 15 writes dQ_i per tile; line 18 writes dK_j, dV_j.
TEST_CASE("V2 backward as FA2 Alg. 2 prints it: D first, dQ_i read and written at every step") {
  const Counters k = run(Algo::v2, Pass::backward, BackwardForm::paper);
  CHECK(k.cost.read_bytes() == (2 * N * d + 2 * N * d + tiles * (4 * B * d + 2 * B)) * 4);
  CHECK(k.cost.read_bytes() == 4'489'216ull * 4);
  CHECK(k.cost.write_bytes() == (N + N * d + tiles * B * d + 2 * N * d) * 4);
  CHECK(k.cost.write_bytes() == 1'246'208ull * 4);
  CHECK(k.cost.bytes(Tensor::D, Dir::write) == N * 4);
  CHECK(k.cost.bytes(Tensor::D, Dir::read) == tiles * B * 4);
  CHECK(k.launches.size() == 2);
  CHECK(k.launches[1].grid == std::int64_t(T));  // one thread block per K/V block
}

// FA2's released kernels: dot_do_o reads O, dO (2 N d), writes D (N) and dQacc = 0 (N d, fp32);
// the main kernel reads K_j, V_j once per j, Q_i, dO_i (2 B d) and L_i, D_i (2 B) per tile, adds
// dQ_i to dQacc with atomics (B d per tile) and writes dK_j, dV_j; convert reads dQacc, writes dQ.
TEST_CASE("V2 backward as FA2 releases it: dQ_i added to an fp32 accumulator with atomics, three launches") {
  const Counters k = run(Algo::v2, Pass::backward);
  CHECK(k.cost.read_bytes() == (2 * N * d + 2 * N * d + tiles * (2 * B * d + 2 * B) + N * d) * 4);
  CHECK(k.cost.read_bytes() == 2'457'600ull * 4);
  CHECK(k.cost.write_bytes() == (N + N * d + 2 * N * d + N * d) * 4);
  CHECK(k.cost.write_bytes() == 263'168ull * 4);
  CHECK(k.cost.atomic_bytes() == tiles * B * d * 4);
  CHECK(k.cost.bytes(Tensor::dQacc, Dir::atomic) == 1'048'576ull * 4);
  CHECK(k.cost.bytes(Tensor::dQ, Dir::read) == 0);  // never read back: the accumulator is
  REQUIRE(k.launches.size() == 3);
  CHECK(k.launches[0].name == "flash_bwd_dot_do_o");
  CHECK(k.launches[1].name == "flash_bwd_dq_dk_dv");
  CHECK(k.launches[2].name == "flash_bwd_convert_dq");
  CHECK(k.launches[0].grid == std::int64_t(T));
  CHECK(k.launches[1].grid == std::int64_t(T));
  // fp16: Q, dO, K, V, dK, dV, dQ at 2 bytes; L, D, dQacc at 4
  const Counters h = run(Algo::v2, Pass::backward, BackwardForm::released, Dtype::fp16);
  CHECK(h.cost.read_bytes() == (2 * N * d) * 2 + (2 * N * d) * 2 + tiles * (2 * B * d * 2 + 2 * B * 4) + N * d * 4);
  CHECK(h.cost.read_bytes() == 5'111'808ull);
  CHECK(h.cost.write_bytes() == N * 4 + N * d * 4 + 2 * N * d * 2 + N * d * 2);
  CHECK(h.cost.atomic_bytes() == tiles * B * d * 4);
}

// FA1 Alg. 3: line 1 reads P (N^2), dO (N d), writes dV; line 2 reads dO, V, writes dP (N^2);
// line 3 reads P, dP, writes dS; line 4 reads dS, K, writes dQ; line 5 reads dS, Q, writes dK.
TEST_CASE("standard backward (FA1 Alg. 3): reads 5N^2 + 5Nd, writes 2N^2 + 3Nd elements") {
  const Counters k = run(Algo::standard, Pass::backward);
  CHECK(k.cost.read_bytes() == (5 * N * N + 5 * N * d) * 4);
  CHECK(k.cost.write_bytes() == (2 * N * N + 3 * N * d) * 4);
  CHECK(k.cost.bytes(Tensor::P, Dir::read) == 2 * N * N * 4);
  CHECK(k.cost.bytes(Tensor::dS, Dir::read) == 2 * N * N * 4);
  CHECK(k.launches.size() == 5);
}

// Five matmuls of 2 B_r B_c d FLOPs per tile (S recomputed, dV, dP, dQ, dK): 10 B_r B_c d, 2.5 times
// the forward's 4 B_r B_c d.
TEST_CASE("backward FLOPs: five matmuls per tile, 2.5x the forward's") {
  for (Algo a : {Algo::v1, Algo::v2}) {
    const Counters f = run(a, Pass::forward), b = run(a, Pass::backward);
    CHECK(b.cost.flops == tiles * 10 * B * B * d);
    CHECK(b.cost.flops * 2 == f.cost.flops * 5);
    const Counters both = run(a, Pass::both);
    CHECK(both.cost.flops == f.cost.flops + b.cost.flops);
    CHECK(both.cost.read_bytes() == f.cost.read_bytes() + b.cost.read_bytes());
    CHECK(both.tiles.visited == f.tiles.visited);  // the tiles are counted once, by the first walk
  }
  // standard attention reads P back instead of recomputing S: four matmuls, 8 N^2 d
  CHECK(run(Algo::standard, Pass::backward).cost.flops == 8 * N * N * d);
}

// Top-left causal, N = 1024, B = 64: 136 of the 256 tiles visible (cases R6); the released kernel
// visits those only, so its per-tile traffic scales to 136 tiles.
TEST_CASE("causal V2 released backward: atomics and per-tile loads on the 136 visited tiles") {
  const Counters k = run(Algo::v2, Pass::backward, BackwardForm::released, Dtype::fp32, Mask{MaskKind::causal_tl, 0, 0});
  CHECK(k.tiles.visited == 136);
  CHECK(k.cost.atomic_bytes() == 136 * B * d * 4);
  CHECK(k.cost.bytes(Tensor::Q, Dir::read) == 136 * B * d * 4);
  CHECK(k.cost.bytes(Tensor::dK, Dir::write) == N * d * 4);  // every K/V block writes dK_j
}

// FA2's deterministic backward (flash_api.cpp mha_bwd, flash_bwd_launch_template.h, flash_bwd_kernel.h
// compute_dq_dk_dv_seqk_parallel), derived by hand: batch 2 x heads 12 = 24 (batch, head) pairs on
// the H200's 132 SMs give nsplits = ceil(132 / 24) = 6 thread blocks per pair; T_c = 16 is not a
// multiple of 6, so thread blocks 0-3 walk 3 K/V blocks (s, s + 6, s + 12) and 4-5 walk 2.
// Per pair, in elements: dot_do_o reads O, dO (2 N d), writes D (N) and zeroes all 6 slices of
// dQacc (6 N d); the main kernel reads K_j, V_j once per j (2 N d), Q_i, dO_i, L_i, D_i per tile
// (2 B d + 2 B), adds B d per tile into its slice, writes dK_j, dV_j (2 N d); convert reads the 6
// slices (6 N d) and writes dQ (N d). Against the released form: (6 - 1) N d more read and written.
TEST_CASE("V2 deterministic backward: nsplits slices of dQacc, zeroed by dot_do_o and read by convert") {
  constexpr std::uint64_t bh = 24, ns = 6;
  Config c;
  c.n_q = c.n_k = std::int64_t(N);
  c.d = std::int64_t(d);
  c.b_r = c.b_c = std::int64_t(B);
  c.dtype = Dtype::fp32;
  c.batch = 2;
  c.heads = 12;
  c.pass = Pass::backward;
  c.backward_form = BackwardForm::deterministic;
  const Problem p = resolve(c);
  REQUIRE(p.gpu.sms == 132);
  CHECK(p.dq_splits == std::int64_t(ns));
  const Counters k = count(p);
  CHECK(k.cost.read_bytes() == bh * (2 * N * d + 2 * N * d + tiles * (2 * B * d + 2 * B) + ns * N * d) * 4);
  CHECK(k.cost.read_bytes() == bh * 2'457'600ull * 4 + bh * (ns - 1) * N * d * 4);  // released's + 5 slices
  CHECK(k.cost.read_bytes() == 267'386'880ull);  // 24 x 2,785,280 elements x 4 bytes
  CHECK(k.cost.write_bytes() == bh * (N + ns * N * d + 2 * N * d + N * d) * 4);
  CHECK(k.cost.write_bytes() == 56'721'408ull);  // 24 x 590,848 elements x 4 bytes
  CHECK(k.cost.atomic_bytes() == bh * tiles * B * d * 4);  // the same atomics as released
  CHECK(k.cost.bytes(Tensor::dQacc, Dir::read) == bh * ns * N * d * 4);
  CHECK(k.cost.bytes(Tensor::dQacc, Dir::write) == bh * ns * N * d * 4);
  REQUIRE(k.launches.size() == 3);
  CHECK(k.launches[0].grid == std::int64_t(bh * T));
  CHECK(k.launches[1].name == "flash_bwd_dq_dk_dv");
  CHECK(k.launches[1].grid == std::int64_t(bh * ns));  // grid (nsplits, batch, head)
  CHECK(k.launches[2].grid == std::int64_t(bh * T));
  // convert: 5 adds per element summing 6 slices (the released form's convert adds nothing)
  c.backward_form = BackwardForm::released;
  const Counters r = count(resolve(c));
  CHECK(k.cost.ops[int(OpKind::add)] - r.cost.ops[int(OpKind::add)] == bh * (ns - 1) * N * d);
  CHECK(k.cost.flops == r.cost.flops);

  // The walk: main-kernel thread block s visits K/V blocks s, s + 6, s + 12 (< 16) in that order,
  // each with T_r = 16 Q blocks from the last down, as released's thread block j does.
  std::map<std::uint32_t, std::vector<std::int64_t>> walked;  // block -> K/V blocks, in order
  struct Walk final : StepObserver {
    std::map<std::uint32_t, std::vector<std::int64_t>>* out;
    std::uint64_t inner = 0;
    void on_step(const StepView& s) override {
      if (s.launch != 1) return;
      if (s.level == Level::outer_begin) {
        (*out)[s.block].push_back(s.j);
        CHECK(s.split == std::int64_t(s.block));
      }
      if (s.level == Level::inner) {
        ++inner;
        CHECK(s.j % std::int64_t(ns) == std::int64_t(s.block));
      }
    }
  } w;
  w.out = &walked;
  Executor e(p);
  e.add_observer(&w);
  e.run();
  CHECK(w.inner == tiles);
  REQUIRE(walked.size() == ns);
  CHECK(walked[0] == std::vector<std::int64_t>{0, 6, 12});
  CHECK(walked[3] == std::vector<std::int64_t>{3, 9, 15});
  CHECK(walked[4] == std::vector<std::int64_t>{4, 10});
  CHECK(walked[5] == std::vector<std::int64_t>{5, 11});
}

// More splits than K/V blocks (one pair: nsplits = 132 > T_c = 16): thread blocks 16-131 walk
// nothing, but convert still reads all 132 slices — the cost of the mode when batch x heads is small.
TEST_CASE("V2 deterministic backward with nsplits > T_c: idle thread blocks, every slice still read") {
  const Counters k = run(Algo::v2, Pass::backward, BackwardForm::deterministic);
  CHECK(k.launches[1].grid == 132);
  CHECK(k.cost.bytes(Tensor::dQacc, Dir::read) == 132 * N * d * 4);
  CHECK(k.cost.bytes(Tensor::dQacc, Dir::write) == 132 * N * d * 4);
  CHECK(k.cost.atomic_bytes() == tiles * B * d * 4);
}
