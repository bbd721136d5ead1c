// Every variant of the five switches (docs/model.md "Variants": 2^5 = 32) against float64, on
// ragged tiles, every mask and every dtype; rows with no visible key included. The numerics
// follow the order and rescale switches: the warp split never changes O or L, the grid only
// where the K/V outer order's delayed division runs on O_i read back from HBM.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "flashlab/schedule/resolve.hpp"
#include "numerics_util.hpp"

using namespace flashlab;
using namespace flashlab::test;

namespace {

std::vector<Switches> all_variants() {
  std::vector<Switches> out;
  for (LoopOrder o : {LoopOrder::kv_outer, LoopOrder::q_outer})
    for (GridKind g : {GridKind::head, GridKind::q_block})
      for (Rescale r : {Rescale::step, Rescale::delayed})
        for (WarpSplit s : {WarpSplit::split_k, WarpSplit::split_q})
          for (bool skip : {false, true}) out.push_back(Switches{o, g, r, s, skip});
  return out;
}

Config with_variant(const Config& c, Algo a, const Switches& v) {
  Config r = with_switches(c, v);  // algo v1 and the switches
  r.algo = a;
  return r;
}

struct Case {
  std::int64_t n_q, n_k, d, b_r, b_c;
  Mask mask;
  Dtype dtype;
};

// Ragged against the tiles, each mask, each dtype; causal-br with N_q > N_k and a narrow window
// leave rows without a visible key (L = +inf, O = 0) and Q blocks without a visited tile.
const Case kCases[] = {
    {13, 9, 5, 4, 3, Mask{}, Dtype::fp32},
    {37, 29, 8, 8, 6, Mask{MaskKind::causal_tl, 0, 0}, Dtype::fp16},
    {40, 17, 16, 8, 8, Mask{MaskKind::causal_br, 0, 0}, Dtype::bf16},
    {50, 61, 3, 7, 9, Mask{MaskKind::window, 3, 2}, Dtype::fp32},
    {64, 64, 32, 16, 16, Mask{MaskKind::causal_tl, 0, 0}, Dtype::fp32},
    {33, 70, 8, 16, 8, Mask{MaskKind::window, 0, 0}, Dtype::fp16},
};

}  // namespace

TEST_CASE("every variant: O and L equal float64 within the dtype's tolerance, no NaN") {
  const std::vector<Switches> variants = all_variants();
  REQUIRE(variants.size() == 32);
  int k = 0, rows_without_keys = 0;
  for (const Case& cs : kCases) {
    CAPTURE(k++);
    Config c0 = config(Algo::v2, cs.n_q, cs.n_k, cs.d, cs.b_r, cs.b_c);
    c0.mask = cs.mask;
    c0.dtype = cs.dtype;
    const Problem base = resolve(c0);
    const Inputs in = make_inputs(base, Fill{}, Fill{}, Fill{}, 7 + std::uint64_t(k));
    const Reference ref = reference(base, in);
    rows_without_keys += int(ref.L.array().isInf().count());
    for (const Switches& v : variants)
      for (Algo a : {Algo::v1, Algo::v2}) {
        CAPTURE(to_string(a));
        CAPTURE(to_string(v.order));
        CAPTURE(to_string(v.grid));
        CAPTURE(to_string(v.rescale));
        CAPTURE(to_string(v.split));
        CAPTURE(v.block_skip);
        const Problem p = resolve(with_variant(c0, a, v));
        const NumericResult r = simulate(p, in);
        const NumericError e = compare(r, ref, p);
        CHECK_FALSE(r.O.hasNaN());
        CHECK_FALSE(r.L.hasNaN());
        CHECK(e.finite);
        // O: the dtype's bound, plus u sqrt(n) for the n round trips of O_i through HBM in the
        // K/V outer order (numerics.hpp tolerance_O); the Q outer order rounds O once.
        const double round_trips = v.order == LoopOrder::kv_outer ? double(v1_rounding_steps(p)) : 0.0;
        CHECK(e.rel_fro_O <= tolerance(cs.dtype) + unit_roundoff(cs.dtype) * std::sqrt(round_trips));
        CHECK(e.L_over_tol <= 1.0);
        CHECK(e.within);
      }
  }
  CHECK(rows_without_keys > 0);
}

TEST_CASE("every variant: the warp split never changes O or L, the grid only for kv-outer delayed") {
  // Bit for bit: the same equations on the same tiles in the same order. The one exception is the
  // K/V outer order with delayed rescaling: with one thread block per head the final division
  // runs in a second pass on O_i read back from HBM (rounded to the input type), with one per Q
  // block on the fp32 O_i still on chip (docs/model.md "Variants") — equal within tolerance only.
  Config c0 = config(Algo::v1, 45, 38, 8, 8, 8);
  c0.mask = Mask{MaskKind::causal_br, 0, 0};
  c0.dtype = Dtype::fp16;
  const Problem base = resolve(c0);
  const Inputs in = make_inputs(base, Fill{}, Fill{}, Fill{}, 3);
  for (LoopOrder o : {LoopOrder::kv_outer, LoopOrder::q_outer})
    for (Rescale r : {Rescale::step, Rescale::delayed})
      for (bool skip : {false, true}) {
        CAPTURE(to_string(o));
        CAPTURE(to_string(r));
        CAPTURE(skip);
        const NumericResult first =
            simulate(resolve(with_variant(c0, Algo::v1, {o, GridKind::head, r, WarpSplit::split_k, skip})), in);
        const bool same_across_grids = !(o == LoopOrder::kv_outer && r == Rescale::delayed);
        for (GridKind g : {GridKind::head, GridKind::q_block}) {
          const NumericResult by_grid =
              simulate(resolve(with_variant(c0, Algo::v2, {o, g, r, WarpSplit::split_k, skip})), in);
          const NumericResult split_q =
              simulate(resolve(with_variant(c0, Algo::v2, {o, g, r, WarpSplit::split_q, skip})), in);
          CHECK(split_q.O == by_grid.O);
          CHECK(split_q.L.cwiseEqual(by_grid.L).all());  // +inf == +inf; no NaN (checked above)
          CHECK(by_grid.L.cwiseEqual(first.L).all());     // L comes from m and l, which no grid rounds
          if (same_across_grids || g == GridKind::head) {
            CHECK(by_grid.O == first.O);
          } else {
            CHECK_FALSE(by_grid.O == first.O);  // the head grid's O_i was rounded before its division
            CHECK(((by_grid.O - first.O).cast<double>().norm()) <= tolerance(c0.dtype) * first.O.cast<double>().norm());
          }
        }
      }
}

TEST_CASE("the delayed rescale divides once: kv-outer with step and delayed rescaling differ") {
  // A check that the switch reaches the numerics: the two equation families round differently
  // (FA1 line 12 divides at every step, FA2 line 12 once), so some element of O differs.
  Config c0 = config(Algo::v1, 64, 96, 16, 16, 16);
  c0.dtype = Dtype::fp16;
  const Problem base = resolve(c0);
  const Inputs in = make_inputs(base, Fill{}, Fill{}, Fill{}, 5);
  c0.rescale = Rescale::step;
  const NumericResult step = simulate(resolve(c0), in);
  c0.rescale = Rescale::delayed;
  const NumericResult delayed = simulate(resolve(c0), in);
  CHECK_FALSE(step.O == delayed.O);
}
