// `--br auto --bc auto` (auto_blocks): over a grid of M, d, dtype, N and algorithm, resolve() never
// refuses the tiles it chose itself; the V1 paper's B_c = ceil(M/(4d)), B_r = min(B_c, d) (computed
// here from the paper, not by the code) is kept whenever it fits, otherwise the largest smaller B_c
// that fits is taken; V2's sizes are multiples of 16; when nothing fits, the error says so.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/schedule/schedule.hpp"

using namespace flashlab;

namespace {

Config auto_config(Algo a, std::int64_t n, std::int64_t d, Dtype t, std::int64_t m) {
  Config c;
  c.algo = a;
  c.n_q = c.n_k = n;
  c.d = d;
  c.dtype = t;
  c.sram_bytes = m;
  c.auto_blocks = true;
  return c;
}

// SRAM bytes of the algorithm's schedule (schedule.hpp sram_bytes: its residency rule), that of
// the algorithm's preset (`--algo a` with its defaults).
std::int64_t sram_of(Algo a, std::int64_t b_r, std::int64_t b_c, std::int64_t d, int e) {
  Config c;
  c.algo = a;
  return sram_bytes(make_schedule(resolve(c)), b_r, b_c, d, e);
}

// The tile as resolve() holds it (a tile larger than the matrix holds the matrix) fits M: the
// simulator's own SRAM function, whatever residency it models for the algorithm.
bool fits(Algo a, std::int64_t b_r, std::int64_t b_c, std::int64_t n, std::int64_t d, int e, std::int64_t m) {
  return sram_of(a, std::min(b_r, n), std::min(b_c, n), d, e) <= m;
}

}  // namespace

TEST_CASE("auto block sizes always fit, keep the paper's rule when it fits, and are multiples of 16 for V2") {
  const std::int64_t sizes[] = {1, 100, 386, 1'000, 4'096, 16'400, 49'152, 100'000, 101'376, 232'448,
                                std::int64_t(1) << 20, std::int64_t(1) << 30};
  const std::int64_t dims[] = {1, 8, 16, 32, 33, 64, 100, 128, 256, 4096};
  const std::int64_t lengths[] = {1, 64, 1000, 4096};
  int accepted = 0, refused = 0, shrunk = 0;
  for (Algo a : {Algo::standard, Algo::v1, Algo::v2})
    for (Dtype t : {Dtype::fp16, Dtype::fp32})
      for (std::int64_t m : sizes)
        for (std::int64_t d : dims)
          for (std::int64_t n : lengths) {
            CAPTURE(to_string(a));
            CAPTURE(to_string(t));
            CAPTURE(m);
            CAPTURE(d);
            CAPTURE(n);
            const int e = t == Dtype::fp32 ? 4 : 2;
            const std::int64_t step = a == Algo::v2 ? 16 : 1;
            const auto rounded = [step](std::int64_t b) { return std::max(step, b / step * step); };
            // FA1 Algorithm 1 line 1, M in elements: B_c = ceil(M / (4d)), B_r = min(B_c, d); at most 2^16.
            const std::int64_t elems = m / e;
            const std::int64_t paper_c = rounded(std::min<std::int64_t>((elems + 4 * d - 1) / (4 * d), 1 << 16));
            const std::int64_t paper_r = rounded(std::min(paper_c, d));
            Problem p;
            try {
              p = resolve(auto_config(a, n, d, t, m));
            } catch (const ConfigError& err) {
              // Refused only when not even the smallest tile fits, and then by the SRAM size.
              CHECK(err.field() == "sram");
              CHECK_FALSE(fits(a, step, step, n, d, e, m));
              CHECK(std::string(err.allowed()).find("for --br auto --bc auto: the smallest tile") != std::string::npos);
              ++refused;
              continue;
            }
            ++accepted;
            const std::int64_t b_r = p.tiling.b_r, b_c = p.tiling.b_c;
            CHECK(fits(a, b_r, b_c, n, d, e, m));
            CHECK(b_r % step == 0);
            CHECK(b_c % step == 0);
            if (fits(a, paper_r, paper_c, n, d, e, m)) {
              CHECK(b_r == paper_r);  // the paper's rule first
              CHECK(b_c == paper_c);
            } else {
              ++shrunk;  // then the largest B_c below it, B_r = min(B_c, d), that fits
              CHECK(b_c < paper_c);
              CHECK(b_r == rounded(std::min(b_c, d)));
              CHECK_FALSE(fits(a, rounded(std::min(b_c + step, d)), b_c + step, n, d, e, m));
            }
          }
  // the grid exercised all three outcomes
  CHECK(accepted > 100);
  CHECK(refused > 10);
  CHECK(shrunk > 10);
}

// Issue 9 item 6: V1, fp32, d = 32, M = 16,400 bytes = 4,100 elements. The paper's B_c =
// ceil(4100 / 128) = 33, B_r = 32 need (32*32 + 2*33*32 + 32*33) * 4 = 16,768 bytes > 16,400 (V1
// holds Q_i, K_j, V_j and S_ij); B_c = B_r = 32 needs (1024 + 2048 + 1024) * 4 = 16,384 <= 16,400.
TEST_CASE("auto block sizes of the issue's V1 example shrink from 32 x 33 to 32 x 32") {
  const Problem p = resolve(auto_config(Algo::v1, 1024, 32, Dtype::fp32, 16'400));
  CHECK(p.tiling.b_r == 32);
  CHECK(p.tiling.b_c == 32);
  CHECK(sram_of(Algo::v1, 32, 33, 32, 4) == 16'768);
  CHECK(sram_of(Algo::v1, 32, 32, 32, 4) == 16'384);
}

// V1, fp16, d = 64: the smallest tile, 1 x 1, holds Q_i, K_j, V_j (64 elements each) and S_ij (1):
// (64 + 128 + 1) * 2 = 386 bytes.
TEST_CASE("auto block sizes when no tile fits: the SRAM size needed") {
  try {
    resolve(auto_config(Algo::v1, 1024, 64, Dtype::fp16, 385));
    FAIL("resolve() accepted an SRAM too small for any tile");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "sram = 385: at least 386 bytes for --br auto --bc auto: the smallest tile, B_r = B_c = 1, needs 386 "
          "bytes at d = 64");
  }
  const Problem p = resolve(auto_config(Algo::v1, 1024, 64, Dtype::fp16, 386));
  CHECK(p.tiling.b_r == 1);
  CHECK(p.tiling.b_c == 1);
}
