// `flashlab compare` and `explain` say what they compare (issue 24 item 5): each algorithm on its
// reference kernel's tile unless one is given — V1 on the tile flashlab's V1 kernel compiles at d
// (kernels/src/tiles.hpp: 64 x 64 x 4 needs 64 (d + 16) / 32 accumulators per thread, at most 160,
// so 32 x 64 x 4 at d = 128), V2 on FA2's — named in the header with its grid; and a note where V1
// moves more HBM bytes than standard attention.
#include <string>

#include <doctest/doctest.h>

#include "run_cli.hpp"

namespace {

constexpr std::uint64_t N = 8192, d = 128, e = 2, H = 32;  // the default: a Llama-3-8B layer, fp16

bool has(const std::string& text, const std::string& s) { return text.find(s) != std::string::npos; }

}  // namespace

TEST_CASE("compare (default): standard on its kernels' 128 x 64 x 8, V1 on its kernel's 32 x 64 x 4 at d = 128, V2 on FA2's 128 x 64 x 4, named with grids") {
  const nlohmann::json j = run_json("compare --json");
  const nlohmann::json& v1 = j.at("algos").at("v1").at("config");
  const nlohmann::json& v2 = j.at("algos").at("v2").at("config");
  CHECK(v1.at("b_r") == 32);
  CHECK(v1.at("b_c") == 64);
  CHECK(v1.at("warps") == 4);
  CHECK(v2.at("b_r") == 128);
  CHECK(v2.at("b_c") == 64);
  // standard: the larger of its kernels' two compiled tiles (kernels/src/tiles.hpp), 128 x 64 x 8
  const nlohmann::json& st = j.at("algos").at("standard").at("config");
  CHECK(st.at("b_r") == 128);
  CHECK(st.at("b_c") == 64);
  CHECK(st.at("warps") == 8);
  const CliResult r = run_cli("compare");
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "tiles B_r x B_c x warps (each algorithm on its reference kernel's):"));
  // V1: T_r = 8192 / 32, T_c = 8192 / 64; one thread block per (batch, head): 32
  CHECK(has(r.out, "  V1         32 x 64  x 4  T_r = 256, T_c = 128; grid 32, one thread block per (batch, head); "
                   "flashlab's V1 kernel (kernels/src/v1.cu): the tile it compiles at d = 128"));
  // V2: T_r = 64 Q blocks per head, 32 x 64 = 2,048 blocks
  CHECK(has(r.out, "  V2        128 x 64  x 4  T_r = 64, T_c = 128; grid 2,048, one thread block per (batch, head, Q block); "
                   "FA2's forward kernel (PyTorch's flash backend): FA2's tile for d = 128"));
  CHECK(has(r.out, "  standard  128 x 64  x 8"));
}

TEST_CASE("compare (default): the note on V1's bytes above standard attention's, with its figures by closed form") {
  const CliResult r = run_cli("compare");
  REQUIRE(r.code == 0);
  // O_i, l_i, m_i read at each of T_c = 128 K/V blocks: H T_c (N d e + 2 N 4) = 8,858,370,048 B = 8.25 GiB.
  static_assert(H * 128 * (N * d * e + 8 * N) == 8'858'370'048ull);
  // V1 (compare_test.cpp's closed form): H (2 N d e + T_c (2 N d e + 8 N) + (T_c + 1)(N d e + 8 N)) = 24.69 GiB;
  // standard: H e (3 N d + 2 N^2 + 2 N^2 + N d) = 16.25 GiB.
  constexpr std::uint64_t t_c = 128, v1 = H * (2 * N * d * e + t_c * (2 * N * d * e + 8 * N) + (t_c + 1) * (N * d * e + 8 * N));
  static_assert(v1 == 26'510'098'432ull);  // 24.69 GiB
  static_assert(H * e * (4 * N * d + 4 * N * N) == 17'448'304'640ull);  // 16.25 GiB
  CHECK(has(r.out, "note: V1 moves more HBM bytes than standard attention here (24.69 GiB against 16.25 GiB): at each of "
                   "its T_c = 128 K/V blocks FA1 Alg. 1 reads Q and O and writes O back, with l and m (8.25 GiB of O, l, "
                   "m re-reads), about 3 N_q d e_in bytes a block, more than the 4 N_q N_k e_in of standard attention's S "
                   "and P roughly when B_c < 3d/4 (here B_c = 64, d = 128)."));
  CHECK(has(r.out, "note: V1 is predicted slower than standard attention: one thread block per (batch, head) gives "
                   "it a grid of 32 for 132 SMs, each block walking its T_r x T_c = 256 x 128 tiles in turn."));
}

TEST_CASE("compare --order q-outer: V1's bytes note names K and V read per Q block, not O round trips") {
  const CliResult r = run_cli("compare --order q-outer");
  REQUIRE(r.code == 0);
  // V1 with Q outer (B_r = 32: T_r = 256): H (N d e [Q] + T_r 2 N d e [K, V] + N d e [O] + 4 N [L]) = 32.13 GiB
  constexpr std::uint64_t t_r = N / 32, v1 = H * (N * d * e + t_r * 2 * N * d * e + N * d * e + 4 * N);
  static_assert(v1 == 34'495'004'672ull);  // 32.13 GiB
  CHECK(has(r.out, "note: V1 moves more HBM bytes than standard attention here (32.13 GiB against 16.25 GiB): with "
                   "the Q blocks outer, each of its T_r = 256 Q blocks reads all of K and V, 2 N_k d e_in bytes a block, "
                   "more than the 4 N_q N_k e_in of standard attention's S and P roughly when B_r < d/2 (here B_r = 32, "
                   "d = 128)."));
  CHECK_FALSE(has(r.out, "O, l, m re-reads)"));
}

TEST_CASE("compare: with a tile given, all three run on it, and no note where V1 moves fewer bytes") {
  const std::string args = "compare --model none --seq 1024 --d 64 --br 64 --bc 64";
  const nlohmann::json j = run_json(args + " --json");
  for (const char* algo : {"standard", "v1", "v2"}) {
    CAPTURE(algo);
    CHECK(j.at("algos").at(algo).at("config").at("b_r") == 64);
    CHECK(j.at("algos").at(algo).at("config").at("b_c") == 64);
  }
  const CliResult r = run_cli(args);
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "tiles B_r x B_c x warps (B_r and B_c as given, warps by default, the same for all three):"));
  CHECK_FALSE(has(r.out, "kernels/src/v1.cu"));
  // N = 1024, d = 64, fp16: V1 (6,955,008 B, lab 01's closed form) below standard (4 N^2 e + 3 N d e + N d e = 8,912,896 B)
  CHECK_FALSE(has(r.out, "note: V1 moves more HBM bytes"));
}

TEST_CASE("compare at d = 64: V1 on its kernel's 64 x 64 x 4 (GPT-2 small), so its O, l, m re-reads follow T_c = 16") {
  const nlohmann::json j = run_json("compare --model gpt2-small --json");
  CHECK(j.at("algos").at("v1").at("config").at("b_r") == 64);
  CHECK(j.at("algos").at("v1").at("config").at("b_c") == 64);
  CHECK(j.at("algos").at("v2").at("config").at("b_r") == 128);  // FA2's 128 x 128 at d <= 64
  CHECK(j.at("algos").at("v2").at("config").at("b_c") == 128);
  // 12 heads x T_c = 16 x (N d e + 2 N 4), N = 1024, d = 64, e = 2
  CHECK(u64_at(j, "algos.v1.derived.hbm_o_l_m_read_bytes") == 12ull * 16 * (1024 * 64 * 2 + 8 * 1024));
}

TEST_CASE("explain names the walk's one tile: FA2's, V2's kernel, and the tile V1's own kernel runs") {
  const CliResult r = run_cli("explain --model llama3-8b --seq 1024");
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "every step on one tile, B_r x B_c x warps = 128 x 64 x 4, T_r = 8, T_c = 16: FA2's tile for d = 128 "
                   "(FA2's forward kernel (PyTorch's flash backend)), so that each step changes its switch only; "
                   "flashlab's V1 kernel (kernels/src/v1.cu) runs 32 x 64 x 4 (the tile it compiles at d = 128)"));
  const CliResult given = run_cli("explain --nq 512 --nk 512 --d 64 --br 64 --bc 64");
  REQUIRE(given.code == 0);
  CHECK(has(given.out, "every step on one tile, B_r x B_c x warps = 64 x 64 x 4, T_r = 8, T_c = 8 (as given)"));
}

TEST_CASE("compare's tile line says which of B_r, B_c and warps were given and which are defaults") {
  // a new user's report: `compare --seq 64 --br 16` said "as given" of a B_c nobody gave
  const struct {
    const char* flags;
    const char* source;
  } cases[] = {{"--br 16", "B_r as given, B_c and warps by default"},
               {"--bc 32", "B_c as given, B_r and warps by default"},
               {"--br 64 --bc 64 --warps 4", "as given"},
               {"--warps 8 --pass backward", "warps as given, B_r and B_c by default"},
               {"--pass backward", "the default tile for d"},
               {"--br auto", "B_r x B_c by the V1 paper's rule (--br/--bc auto), warps by default"}};
  for (const auto& c : cases) {
    const CliResult r = run_cli(std::string("compare --model none --seq 256 --d 64 ") + c.flags);
    INFO(c.flags, "\n", r.err);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, std::string("tiles B_r x B_c x warps (") + c.source + ", the same for all three):\n"));
  }
}

TEST_CASE("compare: DRAM written 0 B where the writes stay in the L2, and the line that says so") {
  const CliResult r = run_cli("compare --model gpt2-small");
  REQUIRE(r.code == 0);
  // 12 heads, N 1024, d 64, fp16, every write still in the 60 MB L2 at the launches' end:
  // standard S and P (2 x 12 N^2 e = 48 MiB) and O (12 N d e = 1.5 MiB); V1 O, l and m (1.5 MiB + 96 KiB);
  // V2 O and L (1.5 MiB + 48 KiB)
  constexpr std::uint64_t n = 1024, h = 12, o = h * n * 64 * 2;
  static_assert(2 * h * n * n * 2 + o == 51'904'512ull);   // 49.50 MiB
  static_assert(o + 2 * h * n * 4 == 1'671'168ull);       // 1.59 MiB
  static_assert(o + h * n * 4 == 1'622'016ull);           // 1.55 MiB
  CHECK(has(r.out, "DRAM written                                         0 B           0 B           0 B"));
  CHECK(has(r.out, "DRAM written: during the launches; still dirty in the L2 at their end, not counted there: "
                   "standard 49.50 MiB, V1 1.59 MiB, V2 1.55 MiB\n"));
}
