// The kernels' global-memory bytes — the simulator's sector level (sector_counter.hpp, an
// observer of the walk) — against byte counts worked out by hand from the kernels' access
// pattern: whole 32-byte sectors per warp request; and their explanation (kernels/host/hw_bytes).
// sector_bytes itself is tested with the sector level (tests/sim/executor/sector_counter_test.cpp).
#include <doctest/doctest.h>

#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/executor/sector_counter.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "hw_bytes.hpp"
#include "../common/config_helpers.hpp"

using namespace flashlab;
using namespace flashlab::gpu;

namespace {

Problem problem(Algo a, std::int64_t n_q, std::int64_t n_k, std::int64_t b, Mask m = {}, std::int64_t heads = 1) {
  Config c = test::small(a, n_q, n_k, 64, b, b, m);
  c.heads = heads;
  return resolve(c);
}

std::uint64_t at(const TensorBytes& b, Tensor t, bool write) { return b[int(t)][write ? 1 : 0]; }

// What the kernels move: the sector level of the simulator's walk.
TensorBytes kernel_bytes(const Problem& p) {
  const Counters k = count(p, /*sectors=*/true);
  REQUIRE(k.sectors);
  return k.levels[int(Memory::sector)];
}

}  // namespace

TEST_CASE("V2 with aligned rows moves exactly the simulator's bytes") {
  // N = 1024, d = 64, 64 x 64 tiles, fp16: Q once (N d), K and V once per Q block (16 N d each),
  // O (N d) and L (N fp32) written once (docs/model.md "Worked example", in bytes).
  const Problem p = problem(Algo::v2, 1024, 1024, 64);
  const TensorBytes k = kernel_bytes(p);
  CHECK(at(k, Tensor::Q, false) == 1024ull * 64 * 2);
  CHECK(at(k, Tensor::K, false) == 16ull * 1024 * 64 * 2);
  CHECK(at(k, Tensor::V, false) == 16ull * 1024 * 64 * 2);
  CHECK(at(k, Tensor::O, true) == 1024ull * 64 * 2);
  CHECK(at(k, Tensor::L, true) == 1024ull * 4);
  CHECK(explain_differences(p, count(p).cost.hbm, k).empty());
}

TEST_CASE("V2's L rows off sector boundaries count whole sectors") {
  // N_q = 33, two heads: head 0 writes rows 0-31 (bytes 0-128: 4 sectors) and row 32 (bytes
  // 128-132: 1 sector); head 1 writes rows 33-64 (bytes 132-260: sectors 4-8, 5 of them) and row
  // 65 (bytes 260-264: 1 sector). 11 sectors = 352 bytes against the 264 the simulator counts.
  const Problem p = problem(Algo::v2, 33, 33, 64, {}, 2);
  const TensorBytes k = kernel_bytes(p);
  CHECK(at(k, Tensor::L, true) == 352);
  CHECK(count(p).cost.bytes(Tensor::L, Dir::write) == 264);
  const auto diffs = explain_differences(p, count(p).cost.hbm, k);
  REQUIRE(diffs.size() == 1);
  CHECK(diffs[0].tensor == Tensor::L);
}

TEST_CASE("standard attention streams K and V once per Q block and pads S, P rows to sectors") {
  // N = 100, d = 64, 64 x 64 tiles: T_r = 2 thread blocks stream K (and V) of 100 x 64 x 2 bytes.
  // A row of S is stored by tile 0 (64 columns: 128 bytes) and tile 1 (36 columns, rounded to 40:
  // 80 bytes, 3 sectors = 96), 224 bytes; the softmax reads 104 columns (208 bytes, 7 sectors).
  const Problem p = problem(Algo::standard, 100, 100, 64);
  const TensorBytes k = kernel_bytes(p);
  CHECK(at(k, Tensor::K, false) == 2ull * 100 * 64 * 2);
  CHECK(at(k, Tensor::V, false) == 2ull * 100 * 64 * 2);
  CHECK(at(k, Tensor::S, true) == 100ull * 224);
  CHECK(at(k, Tensor::S, false) == 100ull * 224);
  CHECK(at(k, Tensor::P, false) == 100ull * 224);
  CHECK(at(k, Tensor::Q, false) == 100ull * 64 * 2);
}

TEST_CASE("V1 reads and writes O, l, m on every visited tile, and initialises them once") {
  // N = 256, 64 x 64 tiles, no mask, dense: 16 tiles, each reading Q_i, O_i (64 x 64 x 2 bytes)
  // and l_i, m_i (64 x 4) and writing O_i, l_i, m_i; line 2 writes O (256 x 64 x 2), l, m (256 x 4).
  const Problem p = problem(Algo::v1, 256, 256, 64);
  const TensorBytes k = kernel_bytes(p);
  CHECK(at(k, Tensor::O, false) == 16ull * 64 * 64 * 2);
  CHECK(at(k, Tensor::O, true) == 16ull * 64 * 64 * 2 + 256ull * 64 * 2);
  CHECK(at(k, Tensor::l, true) == 16ull * 64 * 4 + 256ull * 4);
  CHECK(at(k, Tensor::m, false) == 16ull * 64 * 4);
  CHECK(at(k, Tensor::K, false) == 256ull * 64 * 2);
  CHECK(explain_differences(p, count(p).cost.hbm, k).empty());
}
