// `flashlab count|run --pass backward|both`: docs/model.md "Backward pass" through the command line.
// The bytes are the tables' lines (FA1 Alg. 3 and 4, FA2 Alg. 2 as printed and as released) summed
// here by hand over the tiles of one small config, N = N_q = N_k = 256, d = 32, B_r = B_c = 64, fp16:
// T_r = T_c = 4, 16 tiles of 64 rows, e = 2 bytes an element, 4 for the fp32 statistics (l, m, L,
// D) and the accumulator dQacc. The gradients are closed forms of the chain rule (Q = 0: uniform P).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "flashlab/numerics/npy.hpp"
#include "run_cli.hpp"
#include "../common/approx.hpp"

namespace {

constexpr std::uint64_t N = 256, d = 32, B = 64, T = 4, tiles = T * T, e = 2, s = 4;
const std::string kSmall = "--nq 256 --nk 256 --d 32 --br 64 --bc 64 --dtype fp16 ";
const char* const kTensors[] = {"Q", "K", "V", "O", "l", "m", "L", "S", "P",
                                "dO", "dQ", "dK", "dV", "D", "dQacc", "dP", "dS"};
const char* const kBackwardTensors[] = {"dO", "dQ", "dK", "dV", "D", "dQacc", "dP", "dS"};
using Bytes = std::map<std::string, std::uint64_t>;

std::uint64_t sum(const Bytes& b) {
  std::uint64_t total = 0;
  for (const auto& [t, n] : b) total += n;
  return total;
}

// Every tensor's read and write bytes (the given ones, 0 for the rest), the atomic adds to dQacc,
// and the totals they make.
void check_hbm(const nlohmann::json& j, const Bytes& reads, const Bytes& writes, std::uint64_t atomic) {
  for (const char* t : kTensors) {
    CAPTURE(t);
    CHECK(u64_at(j, std::string("hbm.read_bytes.") + t) == (reads.count(t) ? reads.at(t) : 0));
    CHECK(u64_at(j, std::string("hbm.write_bytes.") + t) == (writes.count(t) ? writes.at(t) : 0));
  }
  CHECK(u64_at(j, "hbm.atomic_bytes.dQacc") == atomic);
  CHECK(u64_at(j, "hbm.total_atomic_bytes") == atomic);
  CHECK(u64_at(j, "hbm.total_read_bytes") == sum(reads));
  CHECK(u64_at(j, "hbm.total_write_bytes") == sum(writes));
  CHECK(u64_at(j, "hbm.total_bytes") == sum(reads) + sum(writes) + atomic);
}

// The values of a .npy file flashlab wrote; returns its shape as Python writes it.
std::string read_values(const std::string& path, std::vector<float>& out) {
  const flashlab::NpyArray a = flashlab::read_npy(path);
  out = a.values;
  return flashlab::npy_shape_text(a.shape);
}

}  // namespace

TEST_CASE("count --pass backward --json, V2 released (FA2's three launches): reads 237,568, writes 82,944, "
          "atomics 131,072 bytes") {
  const nlohmann::json j = run_json("count --algo v2 --pass backward --json " + kSmall);
  // flash_bwd_dot_do_o, per Q block: O_i, dO_i read; D_i (fp32) and dQacc_i = 0 (fp32) written.
  // flash_bwd_dq_dk_dv, per K/V block: K_j, V_j read, dK_j, dV_j written; per visited tile: Q_i, dO_i,
  // L_i, D_i read and dS_ij K_j added to dQacc_i (rows(i) d fp32). flash_bwd_convert_dq: dQacc read, dQ written.
  check_hbm(j,
            {{"O", N * d * e}, {"dO", N * d * e + tiles * B * d * e}, {"K", N * d * e}, {"V", N * d * e},
             {"Q", tiles * B * d * e}, {"L", tiles * B * s}, {"D", tiles * B * s}, {"dQacc", N * d * s}},
            {{"D", N * s}, {"dQacc", N * d * s}, {"dK", N * d * e}, {"dV", N * d * e}, {"dQ", N * d * e}},
            tiles * B * d * s);
  CHECK(u64_at(j, "hbm.total_read_bytes") == 237'568);
  CHECK(u64_at(j, "hbm.total_write_bytes") == 82'944);
  CHECK(u64_at(j, "hbm.total_atomic_bytes") == 131'072);
  CHECK(j.at("config").at("pass") == "backward");
  CHECK(j.at("config").at("backward_form") == "released");
  REQUIRE(j.at("launches").size() == 3);
  const char* const names[] = {"flash_bwd_dot_do_o", "flash_bwd_dq_dk_dv", "flash_bwd_convert_dq"};
  for (std::size_t k = 0; k < 3; ++k) CHECK(j.at("launches")[k].at("name") == names[k]);
  // five matmuls per tile: S recomputed, dV += P^T dO, dP = dO V^T, dQ += dS K, dK += dS^T Q
  CHECK(u64_at(j, "flops.matmul") == tiles * 10 * B * B * d);
}

TEST_CASE("count --pass backward --json, V2 as FA2 Alg. 2 prints it: dQ_i read and written at every tile") {
  const nlohmann::json j = run_json("count --algo v2 --backward-form paper --pass backward --json " + kSmall);
  // lines 3-4 per Q block: O_i, dO_i read, D_i and dQ_i = 0 written; line 6: K_j, V_j; line 9 per
  // visited tile: Q_i, O_i, dO_i, dQ_i, L_i, D_i read; line 15: dQ_i written; line 18: dK_j, dV_j.
  const std::uint64_t per_tile = tiles * B * d * e;
  check_hbm(j,
            {{"O", N * d * e + per_tile}, {"dO", N * d * e + per_tile}, {"K", N * d * e}, {"V", N * d * e},
             {"Q", per_tile}, {"dQ", per_tile}, {"L", tiles * B * s}, {"D", tiles * B * s}},
            {{"D", N * s}, {"dQ", N * d * e + per_tile}, {"dK", N * d * e}, {"dV", N * d * e}}, 0);
  CHECK(u64_at(j, "hbm.total_read_bytes") == 335'872);
  CHECK(u64_at(j, "hbm.total_write_bytes") == 115'712);
  CHECK(j.at("config").at("backward_form") == "paper");
}

TEST_CASE("count --pass backward --json, V1 (FA1 Alg. 4): dQ, dK, dV initialised in HBM, dQ_i written per tile") {
  const nlohmann::json j = run_json("count --algo v1 --pass backward --json " + kSmall);
  // line 2: dQ, dK, dV = 0 written; line 7: K_j, V_j; line 10 per visited tile: Q_i, O_i, dO_i, dQ_i,
  // l_i, m_i read; line 20: dQ_i written; line 23: dK_j, dV_j written. V1 visits every tile.
  const std::uint64_t per_tile = tiles * B * d * e;
  check_hbm(j,
            {{"K", N * d * e}, {"V", N * d * e}, {"Q", per_tile}, {"O", per_tile}, {"dO", per_tile},
             {"dQ", per_tile}, {"l", tiles * B * s}, {"m", tiles * B * s}},
            {{"dQ", N * d * e + per_tile}, {"dK", 2 * N * d * e}, {"dV", 2 * N * d * e}}, 0);
  CHECK(u64_at(j, "hbm.total_read_bytes") == 303'104);
  CHECK(u64_at(j, "hbm.total_write_bytes") == 147'456);
  CHECK(u64_at(j, "tiles.visited") == tiles);
}

TEST_CASE("count --pass backward --json, standard attention (FA1 Alg. 3): P, dP, dS through HBM") {
  const nlohmann::json j = run_json("count --algo standard --pass backward --json " + kSmall);
  // 1: P, dO read, dV written; 2: dO, V read, dP written; 3: P, dP read, dS written;
  // 4: dS, K read, dQ written; 5: dS, Q read, dK written.
  const std::uint64_t nn = N * N * e, nd = N * d * e;
  check_hbm(j,
            {{"P", 2 * nn}, {"dO", 2 * nd}, {"V", nd}, {"dP", nn}, {"dS", 2 * nn}, {"K", nd}, {"Q", nd}},
            {{"dV", nd}, {"dP", nn}, {"dS", nn}, {"dQ", nd}, {"dK", nd}}, 0);
  CHECK(u64_at(j, "hbm.total_read_bytes") == 5 * nn + 5 * nd);
  CHECK(u64_at(j, "hbm.total_write_bytes") == 2 * nn + 3 * nd);
}

TEST_CASE("count --pass backward --json, V2 released with top-left causal: 10 of 16 tiles, atomics per visited tile") {
  const nlohmann::json j = run_json("count --algo v2 --pass backward --mask causal --json " + kSmall);
  // Q block i sees K/V blocks 0..i: T (T + 1) / 2 = 10 visited tiles, the 4 diagonal ones partial.
  const std::uint64_t visited = T * (T + 1) / 2;
  CHECK(u64_at(j, "tiles.visited") == visited);
  CHECK(u64_at(j, "tiles.partial") == T);
  CHECK(u64_at(j, "tiles.skipped") == tiles - visited);
  check_hbm(j,
            {{"O", N * d * e}, {"dO", N * d * e + visited * B * d * e}, {"K", N * d * e}, {"V", N * d * e},
             {"Q", visited * B * d * e}, {"L", visited * B * s}, {"D", visited * B * s}, {"dQacc", N * d * s}},
            {{"D", N * s}, {"dQacc", N * d * s}, {"dK", N * d * e}, {"dV", N * d * e}, {"dQ", N * d * e}},
            visited * B * d * s);
}

TEST_CASE("count --pass both: the forward's bytes plus the backward's, tensor by tensor, on one tiling") {
  for (const std::string algo : {"standard", "v1", "v2", "v2 --backward-form paper", "v2 --mask causal"}) {
    CAPTURE(algo);
    const std::string flags = "count --json --algo " + algo + " " + kSmall;
    // the forward takes no --backward-form (refused with --pass forward): its own flags
    const std::string forward = algo.find("--backward-form") == std::string::npos ? flags : "count --json --algo v2 " + kSmall;
    const nlohmann::json f = run_json(forward + "--pass forward"), b = run_json(flags + "--pass backward"),
                         both = run_json(flags + "--pass both");
    for (const char* dir : {"read_bytes", "write_bytes"})
      for (const char* t : kTensors) {
        CAPTURE(t);
        const std::string key = std::string("hbm.") + dir + "." + t;
        CHECK(u64_at(both, key) == u64_at(f, key) + u64_at(b, key));
      }
    for (const char* key : {"hbm.atomic_bytes.dQacc", "hbm.total_read_bytes", "hbm.total_write_bytes",
                            "hbm.total_atomic_bytes", "hbm.total_bytes", "flops.matmul"})
      CHECK(u64_at(both, key) == u64_at(f, key) + u64_at(b, key));
    CHECK(both.at("launches").size() == f.at("launches").size() + b.at("launches").size());
  }
  // Without tiles given, the backward alone takes FA2's backward tile (64 x 128 for d = 128) and
  // both passes the forward's (128 x 64): both = forward + the backward at the forward's tile.
  const nlohmann::json f = run_json("count --json --seq 1024 --d 128"),
                       both = run_json("count --json --seq 1024 --d 128 --pass both"),
                       b = run_json("count --json --seq 1024 --d 128 --pass backward");
  CHECK(b.at("config").at("b_r") == 64);
  CHECK(b.at("config").at("b_c") == 128);
  CHECK(both.at("config").at("b_r") == f.at("config").at("b_r"));
  CHECK(both.at("config").at("b_c") == f.at("config").at("b_c"));
  const nlohmann::json b_at_forward_tile = run_json("count --json --seq 1024 --d 128 --pass backward --br " +
                                                    f.at("config").at("b_r").dump() + " --bc " +
                                                    f.at("config").at("b_c").dump());
  CHECK(u64_at(both, "hbm.total_bytes") == u64_at(f, "hbm.total_bytes") + u64_at(b_at_forward_tile, "hbm.total_bytes"));
}

TEST_CASE("count --pass forward: the forward as before, no backward rows, no atomics") {
  const CliResult plain = run_cli("count " + kSmall), forward = run_cli("count --pass forward " + kSmall);
  REQUIRE(plain.code == 0);
  REQUIRE(forward.code == 0);
  CHECK(forward.out == plain.out);
  for (const char* t : kBackwardTensors) {
    CAPTURE(t);
    CHECK(plain.out.find(std::string("\n  ") + t + " ") == std::string::npos);  // no table row
  }
  CHECK(plain.out.find("atomic") == std::string::npos);
  CHECK(plain.out.find("pass ") == std::string::npos);  // the config line names no pass
  CHECK(plain.out.find("  read + written: ") != std::string::npos);
  CHECK(plain.out.find("Launches (1):\n  v2_forward ") != std::string::npos);
  // docs/model.md's V2 forward table: Q_i once, K_j and V_j per tile (T_r N d each), O and L written once
  const nlohmann::json j = run_json("count --json " + kSmall);
  check_hbm(j, {{"Q", N * d * e}, {"K", T * N * d * e}, {"V", T * N * d * e}}, {{"O", N * d * e}, {"L", N * s}}, 0);
  CHECK(j.at("config").at("pass") == "forward");
  CHECK(!j.at("config").contains("backward_form"));
  // run: no dO among the inputs, no backward results, no gradient rows
  const nlohmann::json r = run_json("run --nq 2 --nk 2 --d 1 --br 2 --bc 2 --dtype fp32 --show-rows 0 --json");
  CHECK(!r.at("inputs").contains("do"));
  CHECK(!r.at("results").at("v2").contains("backward"));
  CHECK(!r.at("rows").at("v2")[0].contains("dQ"));
  const CliResult text = run_cli("run --nq 64 --nk 64 --d 8 --br 32 --bc 32");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("dO") == std::string::npos);
  CHECK(text.out.find("backward") == std::string::npos);
}

TEST_CASE("run --pass backward --json --show-rows 0,1: every algorithm's gradients within tolerance, rows of dQ dK dV") {
  // tolerance (docs/model.md "Numerics of the backward"): 8u, u = 2^-11 for fp16; V1 and the paper's
  // form round dQ_i at each of the T_c = 4 steps of a Q block: u sqrt(4) more.
  const double u = std::ldexp(1.0, -11);
  for (const std::string form : {"released", "paper"}) {
    CAPTURE(form);
    const nlohmann::json j = run_json("run --algo all --pass backward --backward-form " + form +
                                      " --show-rows 0,1 --json --seed 3 " + kSmall);
    CHECK(j.at("inputs").at("do") == "random");
    for (const char* algo : {"standard", "v1", "v2"}) {
      CAPTURE(algo);
      const nlohmann::json& bw = j.at("results").at(algo).at("backward");
      const bool round_trips = std::string(algo) == "v1" || (std::string(algo) == "v2" && form == "paper");
      CHECK(bw.at("tolerance").get<double>() == flashlab::testing::approx(8 * u + (round_trips ? u * 2 : 0)).epsilon(1e-12));
      CHECK(bw.at("within") == true);
      CHECK(bw.at("finite") == true);
      for (const char* key : {"rel_fro_dQ", "rel_fro_dK", "rel_fro_dV"}) {
        CAPTURE(key);
        CHECK(bw.at(key).get<double>() > 0);  // fp16 rounds somewhere
        CHECK(bw.at(key).get<double>() <= bw.at("tolerance").get<double>());
      }
      CHECK(bw.at("max_abs_D").get<double>() >= 0);
      const nlohmann::json& rows = j.at("rows").at(algo);
      REQUIRE(rows.size() == 2);
      for (std::size_t k = 0; k < 2; ++k) {
        CHECK(rows[k].at("row") == k);
        for (const char* g : {"dQ", "dK", "dV"}) {
          CAPTURE(g);
          REQUIRE(rows[k].at(g).size() == 8);  // min(d, 8) columns
          for (const auto& x : rows[k].at(g)) CHECK(std::isfinite(x.get<double>()));
        }
      }
    }
  }
  const CliResult text = run_cli("run --algo all --pass backward --show-rows 0 " + kSmall);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("dQ, dK, dV against the float64 chain rule") != std::string::npos);
  CHECK(text.out.find("v2 FA2 Alg. 2 as FA2's kernels run it") != std::string::npos);
  CHECK(text.out.find("v2: dQ[r][0..8) (query rows), dK[r] and dV[r] (key rows)") != std::string::npos);
  CHECK(text.out.find("FAIL") == std::string::npos);
}

TEST_CASE("run --pass backward, N = 2, d = 1, Q = 0, dO = [[1], [0]] from a .npy: dV = [[0.5], [0.5]]") {
  // Q = 0 makes every logit 0: P = [[1/2, 1/2], [1/2, 1/2]] whatever K is, so dV = P^T dO = [1/2, 1/2].
  // K_j = V_j = j, scale 1 (d = 1): dP = dO V^T = [[0, 1], [0, 0]], D = rowsum(P o dP) = [1/2, 0],
  // dS = P o (dP - D) = [[-1/4, 1/4], [0, 0]], dQ = dS K = [1/4, 0], dK = dS^T Q = 0.
  // Top-left causal: P = [[1, 0], [1/2, 1/2]], dV = [1, 0], dS = 0, dQ = 0.
  const std::string dir = make_temp_dir();
  const std::string dO_path = dir + "/dO.npy";
  std::ofstream(dO_path, std::ios::binary) << flashlab::encode_npy({flashlab::NpyType::f4, {2, 1}, {1.0f, 0.0f}});
  struct Case {
    std::string mask;
    std::vector<float> dQ, dK, dV;
  };
  const std::vector<Case> cases{{"none", {0.25f, 0.0f}, {0.0f, 0.0f}, {0.5f, 0.5f}},
                                {"causal", {0.0f, 0.0f}, {0.0f, 0.0f}, {1.0f, 0.0f}}};
  for (const Case& c : cases)
    for (const std::string algo : {"standard", "v1", "v2 --backward-form released", "v2 --backward-form paper"})
      for (const std::string tile : {"2", "1"}) {
        CAPTURE(c.mask);
        CAPTURE(algo);
        CAPTURE(tile);
        const std::string out = dir + "/out";
        std::filesystem::remove_all(out);
        const std::string args = "run --pass backward --algo " + algo + " --nq 2 --nk 2 --d 1 --br " + tile +
                                 " --bc " + tile + " --dtype fp32 --mask " + c.mask +
                                 " --q zero --k index --v index --do " + dO_path + " --show-rows 0,1 --out " + out;
        const nlohmann::json j = run_json(args + " --json");
        CHECK(j.at("inputs").at("do") == dO_path);
        const std::string name = algo.substr(0, algo.find(' '));
        const nlohmann::json& rows = j.at("rows").at(name);
        REQUIRE(rows.size() == 2);
        for (std::size_t r = 0; r < 2; ++r) {
          CHECK(rows[r].at("dQ") == nlohmann::json::array({c.dQ[r]}));
          CHECK(rows[r].at("dK") == nlohmann::json::array({c.dK[r]}));
          CHECK(rows[r].at("dV") == nlohmann::json::array({c.dV[r]}));
        }
        CHECK(j.at("results").at(name).at("backward").at("within") == true);
        // --out writes the gradients as .npy beside O and L, at the input dtype
        std::vector<float> got;
        CHECK(read_values(out + "/dV.npy", got) == "(2, 1)");
        CHECK(got == c.dV);
        CHECK(read_values(out + "/dQ.npy", got) == "(2, 1)");
        CHECK(got == c.dQ);
        CHECK(read_values(out + "/dK.npy", got) == "(2, 1)");
        CHECK(got == c.dK);
      }
  // fills: dO = 0 gives zero gradients; dO = 1 everywhere gives dV_j = sum_i P_ij = 1 and D = O,
  // so dS = P o (V^T - O) per row: dQ_r = sum_j P_rj (V_j - O_r) K_j = Var(V) with K = V = index: 1/4.
  const nlohmann::json zero = run_json(
      "run --pass backward --nq 2 --nk 2 --d 1 --br 2 --bc 2 --dtype fp32 --q zero --k index --v index --do zero "
      "--show-rows 0,1 --json");
  const nlohmann::json one = run_json(
      "run --pass backward --nq 2 --nk 2 --d 1 --br 2 --bc 2 --dtype fp32 --q zero --k index --v index --do 1 "
      "--show-rows 0,1 --json");
  for (std::size_t r = 0; r < 2; ++r) {
    for (const char* g : {"dQ", "dK", "dV"}) CHECK(zero.at("rows").at("v2")[r].at(g) == nlohmann::json::array({0.0}));
    CHECK(one.at("rows").at("v2")[r].at("dV") == nlohmann::json::array({1.0}));
    CHECK(one.at("rows").at("v2")[r].at("dQ") == nlohmann::json::array({0.25}));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("--pass, --backward-form, --do: a bad value exits 2 naming the flag and the values allowed") {
  for (const std::string cmd : {"count", "compare", "run", "explain", "sweep --over n --values 256",
                                "trace -o /dev/null"}) {
    CAPTURE(cmd);
    const CliResult p = run_cli(cmd + " --pass sideways");
    CHECK(p.code == 2);
    CHECK(p.out.empty());
    CHECK(p.err.find("flashlab: error: pass = sideways: one of forward, backward, both") != std::string::npos);
    const CliResult f = run_cli(cmd + " --pass backward --backward-form x");
    CHECK(f.code == 2);
    CHECK(f.out.empty());
    CHECK(f.err.find("flashlab: error: backward-form = x: one of released, paper, deterministic") != std::string::npos);
  }
  const std::string small = "run --pass backward --seq 8 --d 4 --br 4 --bc 4 ";
  const CliResult r = run_cli(small + "--do nope");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("flashlab: error: do = nope: one of random, zero, index, or a finite number") != std::string::npos);
  CHECK(r.err.find("or FILE.npy") != std::string::npos);
  const CliResult big = run_cli(small + "--do 70000");  // fp16
  CHECK(big.code == 2);
  CHECK(big.err.find("flashlab: error: do = 70000: a finite number representable in fp16") != std::string::npos);
  const CliResult missing = run_cli(small + "--do /nonexistent/dO.npy");
  CHECK(missing.code == 2);
  CHECK(missing.err.find("/nonexistent/dO.npy") != std::string::npos);
}

// A backward-only choice given where it cannot apply is refused, not ignored.
TEST_CASE("--backward-form without a backward pass and trace --stats-blocks with one are refused") {
  const CliResult form = run_cli("count --backward-form paper " + kSmall);
  CHECK(form.code == 2);
  CHECK(form.err.find("backward-form = paper: released (the default) with --pass forward") != std::string::npos);
  const CliResult stats = run_cli("trace --pass backward --stats-blocks 0 -o /dev/null " + kSmall);
  CHECK(stats.code == 2);
  CHECK(stats.err.find("stats-blocks = 0: no value with --pass backward") != std::string::npos);
}

// FA2's backward tile at d = 64 (128 x 128) holds K_j, V_j, Q_i, dO_i and the B_r x B_c tiles of P
// and dS: (4 x 128 x 64 + 2 x 128 x 128) x 4 = 262,144 bytes in fp32, over the H200's 232,448. The
// default halves B_c: (2 x 128 x 64 + 2 x 64 x 64 + 2 x 128 x 64) x 4 = 40,960 x 4 = 163,840 bytes fit.
TEST_CASE("the backward's default tile shrinks to fit the SRAM (fp32 at d = 64: 128 x 64)") {
  const nlohmann::json j = run_json("count --json --pass backward --seq 1024 --d 64 --dtype fp32");
  CHECK(j.at("config").at("b_r") == 128);
  CHECK(j.at("config").at("b_c") == 64);
  CHECK(u64_at(j, "sram.peak_bytes") == 163'840);
  // fp16 keeps FA2's tile
  const nlohmann::json h = run_json("count --json --pass backward --seq 1024 --d 64");
  CHECK(h.at("config").at("b_c") == 128);
  // given sizes are never changed: a tile that does not fit is refused as before
  CHECK(run_cli("count --pass backward --seq 1024 --d 64 --dtype fp32 --br 128 --bc 128").code == 2);
}

// --backward-form deterministic on the small config with --batch 4 --heads 11: 44 (batch, head)
// pairs on the H200's 132 SMs, nsplits = ceil(132 / 44) = 3 slices of dQacc per pair, thread
// blocks of the main kernel walking K/V blocks {0, 3}, {1}, {2}. By hand, per pair: the released
// form's bytes (FA2's three launches) plus 2 more slices written (zeroed) and read (convert),
// 2 N d x 4 bytes each way; the same atomics (B d x 4 per tile).
TEST_CASE("count --backward-form deterministic: nsplits slices of dQacc, the main grid nsplits x batch x heads") {
  constexpr std::uint64_t pairs = 44, ns = 3;
  const std::string cfg = "count --json --pass backward --batch 4 --heads 11 " + kSmall;
  const nlohmann::json r = run_json(cfg);
  const nlohmann::json j = run_json(cfg + " --backward-form deterministic");
  CHECK(j.at("config").at("backward_form") == "deterministic");
  // released dQacc: N d zeroed and read once per pair
  CHECK(u64_at(r, "hbm.read_bytes.dQacc") == pairs * N * d * s);
  CHECK(u64_at(j, "hbm.read_bytes.dQacc") == pairs * ns * N * d * s);
  CHECK(u64_at(j, "hbm.write_bytes.dQacc") == pairs * ns * N * d * s);
  CHECK(u64_at(j, "hbm.atomic_bytes.dQacc") == pairs * tiles * B * d * s);
  CHECK(u64_at(j, "hbm.total_read_bytes") == u64_at(r, "hbm.total_read_bytes") + pairs * (ns - 1) * N * d * s);
  CHECK(u64_at(j, "hbm.total_write_bytes") == u64_at(r, "hbm.total_write_bytes") + pairs * (ns - 1) * N * d * s);
  for (const char* t : {"Q", "K", "V", "dO", "L", "D", "dQ", "dK", "dV"}) {
    CAPTURE(t);
    CHECK(u64_at(j, std::string("hbm.read_bytes.") + t) == u64_at(r, std::string("hbm.read_bytes.") + t));
    CHECK(u64_at(j, std::string("hbm.write_bytes.") + t) == u64_at(r, std::string("hbm.write_bytes.") + t));
  }
  const auto& launches = j.at("launches");
  REQUIRE(launches.size() == 3);
  CHECK(launches[1].at("grid") == pairs * ns);
  CHECK(launches[2].at("grid") == pairs * T);
  // run: the gradients against float64 are within tolerance as for the released form
  const CliResult run = run_cli("run --pass backward --backward-form deterministic " + kSmall);
  CHECK(run.code == 0);
  CHECK(run.out.find("FA2's kernels run it, deterministic") != std::string::npos);
}

TEST_CASE("--backward-form paper with --algo v1 or standard is refused as deterministic is (it was silently ignored)") {
  for (const char* algo : {"v1", "standard"}) {
    CAPTURE(algo);
    const CliResult r = run_cli(std::string("count --algo ") + algo + " --pass backward --backward-form paper " + kSmall);
    CHECK(r.code == 2);
    CHECK(r.err.find(std::string("backward-form = paper: with --algo v2 only (FA2's Algorithm 2 as printed; --algo ") +
                     algo + " has one backward, its own)") != std::string::npos);
  }
  // a list without v2: the form applies to none of them (with v2 in the list it is V2's: run --algo all)
  const CliResult list = run_cli("run --algo standard,v1 --pass backward --backward-form paper " + kSmall);
  CHECK(list.code == 2);
  CHECK(list.err.find("backward-form (algo standard) = paper: with --algo v2 only") != std::string::npos);
}

TEST_CASE("compare: --backward-form is V2's, standard and V1 run their one backward") {
  for (const char* form : {"paper", "deterministic"}) {
    CAPTURE(form);
    const nlohmann::json j = run_json(std::string("compare --model none --pass backward --backward-form ") + form + " " + kSmall + "--json");
    CHECK(j.at("algos").at("v2").at("config").at("backward_form") == form);
    CHECK(j.at("algos").at("v1").at("hbm") == run_json("count --algo v1 --pass backward " + kSmall + "--json").at("hbm"));
    CHECK(j.at("algos").at("v2").at("hbm") ==
          run_json(std::string("count --algo v2 --pass backward --backward-form ") + form + " " + kSmall + "--json").at("hbm"));
  }
}

TEST_CASE("--backward-form deterministic with --algo v1 or the forward pass is refused, naming the flag") {
  const CliResult v1 = run_cli("count --algo v1 --pass backward --backward-form deterministic " + kSmall);
  CHECK(v1.code == 2);
  CHECK(v1.err.find("backward-form = deterministic: with --algo v2 only") != std::string::npos);
  const CliResult fwd = run_cli("count --backward-form deterministic " + kSmall);
  CHECK(fwd.code == 2);
  CHECK(fwd.err.find("backward-form = deterministic: released (the default) with --pass forward") != std::string::npos);
}
