// Split-KV's numerics (docs/model.md "Split-KV"): partial O and L per split in fp32, merged by the
// combine, against float64; and the merge itself on values worked by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "flashlab/schedule/resolve.hpp"
#include "numerics_util.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;
using namespace flashlab::test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("merge_splits: L = log(sum exp L_s), O = sum exp(L_s - L) O_s, worked by hand") {
  // two splits of one row: L_s = ln 1 and ln 3 (sums of exp 1 and 3), O_s = 2 and 6
  MatrixF l(1, 2);
  l << 0.f, std::log(3.f);
  const Merged m = merge_splits({MatrixF::Constant(1, 1, 2.f), MatrixF::Constant(1, 1, 6.f)}, l);
  CHECK(m.L(0) == flashlab::testing::approx(std::log(4.0)));
  CHECK(m.O(0, 0) == flashlab::testing::approx(2.0 * 1 / 4 + 6.0 * 3 / 4));  // 5
}

TEST_CASE("merge_splits: partial L 200 apart give the larger L and its O, with no overflow") {
  for (float big : {0.f, 200.f, 80.f, -50.f}) {
    CAPTURE(big);
    MatrixF l(1, 3);
    l << big - 200.f, big, -kInf;  // the third split saw no key
    const Merged m = merge_splits({MatrixF::Constant(1, 2, 1e30f), MatrixF::Constant(1, 2, 7.f),
                                   MatrixF::Zero(1, 2)}, l);
    CHECK(m.L(0) == big);         // log1p(exp(-200)) rounds to 0 in fp32
    CHECK(m.O(0, 0) == 7.f);      // exp(-200) underflows: the small split weighs 0, even at 1e30
    CHECK(m.O(0, 1) == 7.f);
    CHECK(std::isfinite(m.O(0, 0)));
  }
}

TEST_CASE("merge_splits: a row that no split saw gets O = 0, L = +inf, bad shapes are refused") {
  MatrixF l = MatrixF::Constant(2, 2, -kInf);
  l(1, 1) = 1.5f;
  const Merged m = merge_splits({MatrixF::Constant(2, 3, 4.f), MatrixF::Constant(2, 3, 9.f)}, l);
  CHECK(m.L(0) == kInf);
  CHECK((m.O.row(0).array() == 0.f).all());
  CHECK(m.L(1) == 1.5f);
  CHECK((m.O.row(1).array() == 9.f).all());
  CHECK_THROWS_AS(merge_splits({MatrixF::Zero(2, 3)}, l), std::invalid_argument);
  CHECK_THROWS_AS(merge_splits({MatrixF::Zero(2, 3), MatrixF::Zero(1, 3)}, l), std::invalid_argument);
}

TEST_CASE("split-KV: O and L equal float64 within the dtype's tolerance for every split count and mask") {
  struct Case {
    std::int64_t n_q, n_k, d, b_r, b_c;
    Mask mask;
    Dtype dtype;
  };
  // ragged tiles; causal-br with N_q > N_k and a narrow window leave rows without a key
  const Case cases[] = {
      {13, 29, 5, 4, 3, Mask{}, Dtype::fp32},
      {37, 29, 8, 8, 6, Mask{MaskKind::causal_tl, 0, 0}, Dtype::fp16},
      {40, 17, 16, 8, 4, Mask{MaskKind::causal_br, 0, 0}, Dtype::bf16},
      {50, 61, 3, 7, 9, Mask{MaskKind::window, 3, 2}, Dtype::fp32},
      {3, 200, 8, 16, 16, Mask{MaskKind::causal_br, 0, 0}, Dtype::fp16},  // decode-like: few rows, long N_k
  };
  int k = 0, rows_without_keys = 0;
  for (const Case& cs : cases) {
    CAPTURE(k++);
    Config c = config(Algo::v2, cs.n_q, cs.n_k, cs.d, cs.b_r, cs.b_c);
    c.mask = cs.mask;
    c.dtype = cs.dtype;
    const Problem base = resolve(c);
    const Inputs in = make_inputs(base, Fill{}, Fill{}, Fill{}, 11 + std::uint64_t(k));
    const Reference ref = reference(base, in);
    rows_without_keys += int(ref.L.array().isInf().count());
    const NumericResult unsplit = simulate(base, in);
    for (std::int64_t splits : {2, 3, 5, 40}) {  // 40: more splits than K/V blocks
      CAPTURE(splits);
      c.splits = splits;
      const Problem p = resolve(c);
      const NumericResult r = simulate(p, in);
      const NumericError e = compare(r, ref, p);
      CHECK(e.finite);
      CHECK(e.within);
      CHECK_FALSE(r.O.hasNaN());
      // rows without a visible key: exactly what the unsplit V2 writes
      for (Eigen::Index row = 0; row < r.L.size(); ++row)
        if (std::isinf(unsplit.L(row))) {
          CHECK(r.L(row) == kInf);
          CHECK((r.O.row(row).array() == 0.f).all());
        }
    }
  }
  CHECK(rows_without_keys > 0);
}

TEST_CASE("split-KV with one visited split per row block gives the unsplit V2's O and L bit for bit") {
  // causal, N = 32, B = 8, splits of 2 K/V blocks: Q block 0 and 1 see only split 0's blocks, so
  // their merge has one finite L_s: weight exp(0) = 1, and O, L are the split's, as V2 writes them
  // (the fp32 partial O is the same unnormalised sum divided by the same l)
  Config c = config(Algo::v2, 32, 32, 8, 8, 8);
  c.mask = Mask{MaskKind::causal_tl, 0, 0};
  const Problem base = resolve(c);
  const Inputs in = make_inputs(base, Fill{}, Fill{}, Fill{}, 5);
  c.splits = 2;
  const NumericResult r = simulate(resolve(c), in), v2 = simulate(base, in);
  CHECK(r.O.topRows(16) == v2.O.topRows(16));
  CHECK(r.L.head(16).cwiseEqual(v2.L.head(16)).all());
}
