// The counting model against values derived by hand (shared/DESIGN.md worked example, cases R6).
#include <doctest/doctest.h>

#include "flashlab/executor.hpp"

using namespace flashlab;

namespace {

Counters run(Algo a, Mask m = {}, Dtype t = Dtype::fp32, std::int64_t n = 1024) {
  Config c;
  c.algo = a;
  c.n_q = c.n_k = n;
  c.d = 64;
  c.b_r = c.b_c = 64;
  c.dtype = t;
  c.mask = m;
  return count(resolve(c));
}

}  // namespace

// shared/DESIGN.md "Worked example" (= shared/cases R6): N = 1024, d = 64, B_r = B_c = 64, no
// mask, in elements. fp32 makes every element 4 bytes, statistics included, so bytes / 4 = elements.
TEST_CASE("worked example: V2 reads 2,162,688 and writes 66,560 elements") {
  const Counters k = run(Algo::v2);
  CHECK(k.cost.read_bytes() == 2'162'688ull * 4);
  CHECK(k.cost.write_bytes() == 66'560ull * 4);
  // by tensor: Q once (N d), K and V once per tile (T_r * N d each), O (N d) and L (N) once
  CHECK(k.cost.bytes(Tensor::Q, Dir::read) == 1024ull * 64 * 4);
  CHECK(k.cost.bytes(Tensor::K, Dir::read) == 16ull * 1024 * 64 * 4);
  CHECK(k.cost.bytes(Tensor::V, Dir::read) == 16ull * 1024 * 64 * 4);
  CHECK(k.cost.bytes(Tensor::O, Dir::write) == 1024ull * 64 * 4);
  CHECK(k.cost.bytes(Tensor::L, Dir::write) == 1024ull * 4);
}

TEST_CASE("worked example: V1 reads 2,260,992 and writes 1,081,344 + 67,584 elements") {
  const Counters k = run(Algo::v1);
  CHECK(k.cost.read_bytes() == 2'260'992ull * 4);
  CHECK(k.cost.write_bytes() == (1'081'344ull + 67'584ull) * 4);
  // the loop writes O_i, l_i, m_i on each of the 256 tiles; line 2 writes O, l, m once more
  CHECK(k.cost.bytes(Tensor::O, Dir::write) == (256ull * 64 * 64 + 1024ull * 64) * 4);
  CHECK(k.cost.bytes(Tensor::l, Dir::write) == (256ull * 64 + 1024) * 4);
}

TEST_CASE("worked example: standard reads 2,293,760 and writes 2,162,688 elements") {
  const Counters k = run(Algo::standard);
  CHECK(k.cost.read_bytes() == 2'293'760ull * 4);
  CHECK(k.cost.write_bytes() == 2'162'688ull * 4);
}

TEST_CASE("cases R6: V2 with top-left causal visits 136 of 256 tiles and reads 1,179,648 elements") {
  const Counters k = run(Algo::v2, Mask{MaskKind::causal_tl, 0, 0});
  CHECK(k.tiles.total == 256);
  CHECK(k.tiles.visited == 136);
  CHECK(k.cost.read_bytes() == 1'179'648ull * 4);
}
