// round_trips.cpp — the memory round trips a step waits for, and their latency (round_trips.hpp).
#include "round_trips.hpp"

#include <algorithm>
#include <cmath>

#include "flashlab/executor/action_cost.hpp"
#include "flashlab/memory/occupancy.hpp"

namespace flashlab::time_detail {
namespace {

constexpr double kRowInFlight = 128.0 * 16;  // bytes of loads a row block has in flight

// Row passes: equations that go through their operands row by row in registers (D_i = rowsum(dO_i
// o O_i), the dQ conversion, V1's normalisation, split-KV's combine). Their loads stream, one
// 16-byte load per thread in flight (or one element where a row is shorter), each used before the next is issued
// (kernels/src/v1_backward.cu row_dot, v2_backward.cu fl_v2_bwd_dot_do_o and fl_v2_bwd_convert_dq):
// a step waits one round trip per threads x 16 bytes of each. A tensor that a matmul of the same
// step also reads arrives with the tile copy instead (one round trip for all of them, cp.async).
bool streams(Eq eq, Tensor x) {
  switch (eq) {
    case Eq::bwd_D: return x == Tensor::O || x == Tensor::dO;
    case Eq::convert_dq: return x == Tensor::dQacc;
    case Eq::normalize: return x == Tensor::O || x == Tensor::l;
    case Eq::combine: return x == Tensor::Oacc || x == Tensor::Lacc;
    default: return false;
  }
}
bool matmul_reads(Eq eq, Tensor x) {
  switch (eq) {
    case Eq::scores: return x == Tensor::Q || x == Tensor::K;
    case Eq::output_v1: case Eq::output_v2: case Eq::output_dense: return x == Tensor::P || x == Tensor::V;
    case Eq::grad_v: case Eq::grad_p: return x == Tensor::dO || x == Tensor::V || x == Tensor::P;
    case Eq::grad_q: case Eq::grad_k: return x == Tensor::dS || x == Tensor::K || x == Tensor::Q;
    default: return false;
  }
}
bool streamed(const StepView& s, Tensor x) {
  bool row = false, tile = false;
  for (const Action& a : s.actions)
    if (a.op == Op::compute) row = row || streams(a.eq, x), tile = tile || matmul_reads(a.eq, x);
  return row && !tile;
}

/// Round trips in sequence for `loads` 16-byte loads of each of n copies (split-KV's combine: every
/// split's Oacc; n = 1 for any other streamed tensor) by `threads` threads, one load each in flight:
/// ceil(loads / threads) passes. Over the copies, each kernel as its code walks them: this project's
/// combine loops over the splits unrolled by 4 (nvcc -O3, the PTX of kernels/src/v2_split.cu
/// fl_v2_combine: four independent loads per pass, then up to three one after another); FA2's
/// (flash_fwd_kernel.h combine_attn_seqk_parallel) copies one split's Oaccum tile at a time, every
/// thread's loads of it in flight together: one round trip per split.
double walk_trips(const Problem& p, std::int64_t n, double loads, double threads) {
  if (n <= 1) return std::ceil(loads / threads);
  if (p.kernel == Kernel::fa2) return double(n);
  return std::ceil(loads / threads) * double(n / 4 + (n % 4 > 0 ? 1 : 0));
}

/// Round trips of this project's combine reading every split's L_s of its rows before any O_s
/// (kernels/src/v2_split.cu fl_v2_combine: a warp loads 32 rows of one split and stores them into
/// SRAM before its next load, the W warps taking the splits in turn: ceil(n ceil(rows / 32) / W)
/// one after another, then a barrier); FA2's reads them together (one). 0 for a single copy.
double lse_walk_trips(const Problem& p, std::int64_t n, double rows, double warps) {
  if (n <= 1 || p.kernel == Kernel::fa2) return 0;
  return std::ceil(double(n) * std::ceil(rows / 32.0) / warps);
}

}  // namespace

/// Round trips of step s's loads when a row pass streams some of them (streams()): a thread has one
/// load of 16 bytes (or one element where a row is shorter) in flight, so a tensor of n such loads
/// takes ceil(n / threads) round trips, one copy after another where each thread walks the copies of
/// its row in turn (split-KV's combine: every split's Oacc row, kernels/src/v2_split.cu); the step
/// waits for its largest streamed tensor, after the tile copy's one round trip when the step has
/// other loads; 0 when nothing streams. `fraction`: the block's share.
double streamed_load_trips(const Problem& p, const Launch& l, const StepView& s, double fraction) {
  const double threads = 32.0 * double(launch_warps(p, l));
  double trips = 0, lse = 0;
  bool copied = false;
  for (const Action& a : s.actions) {
    if (a.op != Op::load) continue;
    if (!streamed(s, a.tensor)) {
      copied = true;
      continue;
    }
    const Extent x = action_extent(p, a, s.i, s.j);
    const double e = double(tensor_element_bytes(p, a.tensor));
    const std::int64_t n = a.region == Region::q_block_splits ? copies(p, a.tensor) : 1;
    const double per_row = std::ceil(double(x.cols) * e / std::min(16.0, double(x.cols) * e));
    const double loads = fraction * double(x.rows) / double(n) * per_row;  // one copy's
    if (a.tensor == Tensor::Lacc) lse = lse_walk_trips(p, n, fraction * double(x.rows) / double(n), threads / 32.0);
    else trips = std::max(trips, walk_trips(p, n, loads, threads));
    if (a.tensor == Tensor::Lacc && lse == 0) trips = std::max(trips, walk_trips(p, n, loads, threads));
  }
  trips += lse;  // the combine's L_s walk, then a barrier, then its O_s walk
  return trips > 0 ? trips + (copied ? 1 : 0) : 0;
}


/// Round trips of kRowInFlight bytes a row block waits for: its loaded rows at the input type.
double row_round_trips(const Problem& p, const Launch& l) {
  const double row = double(p.tiling.n_k) * double(p.e_in);
  return double(row_tensors_loaded(l)) * std::ceil(row / kRowInFlight);
}

/// Whether launch l stores tensor x to global memory (a load of x then depends on the launch's own
/// earlier store: V1's O_i, l_i, m_i, V1's backward dQ_i).
bool stores(const Launch& l, Tensor x) {
  auto in = [x](const std::vector<Action>& v) {
    return std::any_of(v.begin(), v.end(), [x](const Action& a) { return a.op == Op::store && a.tensor == x; });
  };
  return in(l.body) || in(l.outer_begin) || in(l.outer_end) || std::any_of(l.prologue.begin(), l.prologue.end(), in);
}

namespace {

/// The share of launch x's L2 read requests that go on to DRAM (the L2 model's), 0 to 1.
double miss_share(const Counters& k, std::size_t x) {
  const double requested = double(total(k.launches[x].l2, Dir::read));
  return requested > 0 ? std::min(1.0, double(total(k.launches[x].dram, Dir::read)) / requested) : 0.0;
}

}  // namespace

/// `params` with launch x's round trip, measured latencies plus lambda at the launch's load (round_trips.hpp).
TimeParams with_round_trip(const TimeParams& params, const GpuSpec& g, const Counters& k, std::size_t x, double load) {
  TimeParams at = params;
  at.latency_s = params.latency_s * load;
  if (!k.l2) return at;
  const double hit = g.l2_hit_latency_s.value();
  at.latency_s += hit + miss_share(k, x) * (g.dram_latency_s.value() - hit);
  return at;
}

double tma_round_trip(const GpuSpec& g, const Counters& k, std::size_t x) {
  const double miss = k.l2 ? miss_share(k, x) : 0.0;
  return g.tma_round_trip_s.value() + miss * (g.dram_latency_s.value() - g.l2_hit_latency_s.value());
}

double ring_wake_s(const GpuSpec& g, double step_bytes) {
  const double lone = g.tma_round_trip_s.value() + step_bytes / g.tma_sm_bytes_per_s.value();
  return std::max(0.0, kRingTurnaround_s - lone);
}

}  // namespace flashlab::time_detail
