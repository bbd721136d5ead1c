// Validation: every invalid value gets a ConfigError naming the field, the value and what is allowed.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;

namespace {

// Runs resolve(c) and returns the error it throws (fails the test when none is thrown).
ConfigError error_of(const Config& c) {
  try {
    resolve(c);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("resolve() accepted an invalid config");
  return ConfigError("", "", "");
}

}  // namespace

TEST_CASE("sizes outside their ranges name the field and the value") {
  Config c;
  c.n_q = 0;
  CHECK(error_of(c).field() == "nq");
  c = Config{};
  c.n_k = -5;
  CHECK(error_of(c).value() == "-5");
  c = Config{};
  c.d = 0;
  CHECK(error_of(c).field() == "d");
  c = Config{};
  c.b_r = 0;
  CHECK(error_of(c).field() == "br");
  c = Config{};
  c.batch = 0;
  CHECK(error_of(c).field() == "batch");
  c = Config{};
  c.warps = 33;
  CHECK(std::string(error_of(c).what()) == "warps = 33: an integer from 1 to 32");
  c = Config{};
  c.mask = Mask{MaskKind::window, -2, 3};  // -1 is FA2's "no limit"; below it nothing
  CHECK(error_of(c).field() == "window left");
  c = Config{};
  c.scale = -0.5;
  CHECK(std::string(error_of(c).what()) == "scale = -0.5: a finite number > 0");
  c = Config{};
  c.gpu = "v100";
  CHECK(error_of(c).allowed() == "one of a100, h100, h200");
}

TEST_CASE("tiles over the SRAM capacity report bytes needed, capacity and the largest tiles that fit") {
  Config c;  // V1 (Q_i, K_j, V_j and S_ij in SRAM), fp16, d = 64
  c.algo = Algo::v1;
  c.b_r = c.b_c = 256;
  c.sram_bytes = 100'000;
  const ConfigError e = error_of(c);
  CHECK(e.field() == "br x bc");
  CHECK(e.value() == "256 x 256");
  // needs (256*64 + 2*256*64 + 256*256) * 2 = 98,304 + 131,072 = 229,376 bytes
  const std::string msg = e.what();
  CHECK(msg.find("229376 bytes") != std::string::npos);
  CHECK(msg.find("100000 bytes") != std::string::npos);
  // largest square B: (3*64 B + B^2) * 2 = 384 B + 2 B^2 <= 100,000: B = 147 gives 56,448 + 43,218
  // = 99,666; B = 148 gives 56,832 + 43,808 = 100,640 > 100,000 -> 147 (multiple of 16: 144)
  CHECK(msg.find("largest B_r = B_c that fits is 147 (multiple of 16: 144)") != std::string::npos);
}

TEST_CASE("counts that would overflow 64 bits are refused") {
  Config c;
  c.n_q = c.n_k = 2'000'000'000;
  c.d = 4096;
  c.b_r = c.b_c = 1 << 16;
  c.sram_bytes = std::int64_t(1) << 40;
  c.batch = c.heads = 1'000'000;
  CHECK(error_of(c).field() == "batch*heads*(N_q*N_k*(d+1) + (T_c*N_q + T_r*N_k)*(d+2))");
}

// The guard and its message agree exactly: refused iff S = batch*heads*(N_q*N_k*(d+1) +
// (T_c*N_q + T_r*N_k)*(d+2)) >= 2^57, S computed here in 128 bits. N = 2^27, d = 1, B = 2^16
// (T = 2^11): S / batch = 2^55 + 2 * 2^11 * 2^27 * 3 = 2^55 + 3 * 2^39, so batch 3 passes (the
// product batch*N_q*N_k*d is 3 * 2^54, below 2^56) and batch 4 is refused with S printed.
TEST_CASE("the 64-bit guard refuses exactly S >= 2^57 and says so") {
  Config c;
  c.n_q = c.n_k = std::int64_t(1) << 27;
  c.d = 1;
  c.b_r = c.b_c = 1 << 16;
  c.sram_bytes = std::int64_t(1) << 40;
  const auto sum = [](std::int64_t batch) {
    using u128 = unsigned __int128;
    const u128 n = u128(1) << 27, t = u128(1) << 11;
    return (n * n * 2 + (t * n + t * n) * 3) * u128(batch);
  };
  for (std::int64_t batch = 1; batch <= 8; ++batch) {
    CAPTURE(batch);
    c.batch = batch;
    const bool over = sum(batch) >= (unsigned __int128)(1) << 57;
    CHECK(over == (batch >= 4));
    if (!over) {
      CHECK_NOTHROW(resolve(c));
      continue;
    }
    const ConfigError e = error_of(c);
    const auto s = std::uint64_t(sum(batch));  // below 2^64 for batch <= 8
    CHECK(e.value() == std::to_string(s));
    CHECK(e.allowed().rfind("less than 2^57 = 144115188075855872, so that every counter", 0) == 0);
  }
}

TEST_CASE("tiles over the SRAM capacity when no tile fits say so") {
  Config c;  // V1, fp16, d = 64: B_r = B_c = 1 holds (64 + 2*64 + 1) * 2 = 386 bytes
  c.algo = Algo::v1;
  c.b_r = c.b_c = 4;
  c.sram_bytes = 10;
  CHECK(error_of(c).allowed().find("; no tile fits: even B_r = B_c = 1 needs 386 bytes") != std::string::npos);
  // B = 8: (3*64*8 + 64) * 2 = 3,200 bytes; B = 9: (3*64*9 + 81) * 2 = 3,618: 8 is the largest
  c.sram_bytes = 3'500;
  c.b_r = c.b_c = 16;
  CHECK(error_of(c).allowed().find("the largest B_r = B_c that fits is 8 (no multiple of 16 fits)") != std::string::npos);
}

TEST_CASE("too many tiles to walk are refused with a hint") {
  Config c;
  c.n_q = c.n_k = 1 << 20;
  c.b_r = c.b_c = 16;  // 2^32 tiles
  CHECK(error_of(c).field() == "tiles");
}

TEST_CASE("defaults: V2 skips blocks and splits along Q, V1 is dense and splits along K") {
  Config c;
  c.algo = Algo::v2;
  Problem p = resolve(c);
  CHECK(p.block_skip);
  CHECK(p.split == WarpSplit::split_q);
  CHECK(p.scale == flashlab::testing::approx(0.125));  // 1/sqrt(64)
  c.algo = Algo::v1;
  p = resolve(c);
  CHECK_FALSE(p.block_skip);
  CHECK(p.split == WarpSplit::split_k);
}

TEST_CASE("parsers reject unknown names with the allowed values") {
  CHECK_THROWS_WITH_AS(parse_algo("v4"), "algo = v4: one of standard, v1, v2, v3", ConfigError);
  CHECK_THROWS_WITH_AS(parse_dtype("fp8"), "dtype = fp8: one of fp16, bf16, fp32", ConfigError);
  CHECK_THROWS_AS(parse_mask("window:3"), ConfigError);
  CHECK_THROWS_AS(parse_mask("window:-2,2"), ConfigError);
  CHECK(parse_mask("window:-1,2").left == -1);  // no limit on the left (FA2's window_size = (-1, 2))
  CHECK_THROWS_AS(parse_mask("window:a,b"), ConfigError);
  CHECK_THROWS_AS(parse_mask("diagonal"), ConfigError);
  const Mask w = parse_mask("window:4095,0");
  CHECK(w.kind == MaskKind::window);
  CHECK(w.left == 4095);
  CHECK(w.right == 0);
  CHECK(to_string(w) == "window:4095,0");
}

TEST_CASE("kv_heads: heads unless given, from 1 to heads and a divisor of heads (GQA)") {
  Config c;
  c.heads = 32;
  CHECK(resolve(c).kv_heads == 32);
  CHECK(resolve(c).group() == 1);
  c.kv_heads = 8;  // Llama-3-8B: 4 query heads per K/V head
  CHECK(resolve(c).group() == 4);
  c.kv_heads = 1;  // multi-query attention
  CHECK(resolve(c).group() == 32);
  for (std::int64_t bad : {0, 3, 64, -1}) {
    c.kv_heads = bad;
    const ConfigError e = error_of(c);
    CHECK(e.field() == "kv-heads");
    CHECK(e.value() == std::to_string(bad));
    CHECK(std::string(e.allowed()) == "an integer from 1 to heads (32) that divides heads");
  }
}
