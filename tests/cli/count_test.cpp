// `flashlab count`: docs/model.md's worked example (tests/sim/executor/counting_test.cpp) to the byte, through the
// command line. N = N_q = N_k = 1024, d = 64, B_r = B_c = 64, so T_r = T_c = 16 and 256 tiles of
// 64 x 64; fp32 makes every element 4 bytes (statistics l, m, L are fp32 anyway), so each figure
// below is the design's element count times 4. Per-tensor values are derived here from the
// algorithms' lines, not from the library.
#include <doctest/doctest.h>

#include "run_cli.hpp"

namespace {

constexpr std::uint64_t N = 1024, d = 64, T = 16, e = 4;
const std::string kWorked = "--nq 1024 --nk 1024 --d 64 --br 64 --bc 64 --dtype fp32 ";
const char* const kTensors[] = {"Q", "K", "V", "O", "l", "m", "L", "S", "P"};

// Every tensor's read and write bytes: the given ones, 0 for the rest.
void check_tensors(const nlohmann::json& j, const std::map<std::string, std::uint64_t>& reads,
                   const std::map<std::string, std::uint64_t>& writes) {
  for (const char* t : kTensors) {
    CAPTURE(t);
    CHECK(u64_at(j, std::string("hbm.read_bytes.") + t) == (reads.count(t) ? reads.at(t) : 0));
    CHECK(u64_at(j, std::string("hbm.write_bytes.") + t) == (writes.count(t) ? writes.at(t) : 0));
  }
}

}  // namespace

TEST_CASE("count --json, worked example, V2: reads 2,162,688 and writes 66,560 elements") {
  const nlohmann::json j = run_json("count --algo v2 --json " + kWorked);
  CHECK(u64_at(j, "hbm.total_read_bytes") == 2'162'688ull * 4);
  CHECK(u64_at(j, "hbm.total_write_bytes") == 66'560ull * 4);
  // FA2 Alg. 1: Q_i once per block (N d in all), K_j and V_j once per tile (T_r N d each);
  // O_i once (N d) and L_i once (N, fp32).
  check_tensors(j, {{"Q", N * d * e}, {"K", T * N * d * e}, {"V", T * N * d * e}}, {{"O", N * d * e}, {"L", N * 4}});
  CHECK(u64_at(j, "tiles.total") == 256);
  CHECK(u64_at(j, "tiles.visited") == 256);
  CHECK(u64_at(j, "tiles.full") == 256);
  CHECK(u64_at(j, "tiles.partial") == 0);
  CHECK(u64_at(j, "tiles.skipped") == 0);
  CHECK(u64_at(j, "flops.matmul") == 256ull * 4 * 64 * 64 * 64);  // 4 rows cols d per tile
  CHECK(u64_at(j, "ops.div") == N * d);                         // line 12: O_i = diag(l)^-1 O_i, once
  CHECK(u64_at(j, "ops.log") == N);                             // line 13: L_i = m_i + log(l_i), per row
  for (const char* op : {"exp", "max", "add", "sub", "mul"}) CHECK(u64_at(j, std::string("ops.") + op) > 0);
  // FA2's kernel keeps Q_i, K_j and V_j in SRAM (S_ij/P_ij and O_i in registers), at e = 4 bytes
  CHECK(u64_at(j, "sram.peak_bytes") == (64 * d + 2 * 64 * d) * e);
  CHECK(u64_at(j, "grid.blocks") == T);  // one thread block per Q block
  CHECK(j.at("config").at("t_r") == 16);
  CHECK(j.at("config").at("t_c") == 16);
  CHECK(j.at("config").at("mask") == "none");
  CHECK(j.at("config").at("dtype") == "fp32");
  CHECK(j.at("config").at("block_skip") == true);
}

TEST_CASE("count --json, worked example, V1: reads 2,260,992 and writes 1,081,344 + 67,584 elements") {
  const nlohmann::json j = run_json("count --algo v1 --json " + kWorked);
  CHECK(u64_at(j, "hbm.total_read_bytes") == 2'260'992ull * 4);
  CHECK(u64_at(j, "hbm.total_write_bytes") == (1'081'344ull + 67'584ull) * 4);
  // FA1 Alg. 1: line 2 writes O, l, m; per K/V block j (T_c of them) K_j and V_j once, and for
  // every Q block i: read Q_i, O_i, l_i, m_i, write O_i, l_i, m_i.
  check_tensors(j,
                {{"Q", T * N * d * e}, {"K", N * d * e}, {"V", N * d * e}, {"O", T * N * d * e}, {"l", T * N * 4},
                 {"m", T * N * 4}},
                {{"O", (T + 1) * N * d * e}, {"l", (T + 1) * N * 4}, {"m", (T + 1) * N * 4}});
  CHECK(u64_at(j, "tiles.visited") == 256);
  CHECK(u64_at(j, "grid.blocks") == 1);  // one thread block per (batch, head)
  CHECK(j.at("config").at("block_skip") == false);
}

TEST_CASE("count --json, worked example, standard: reads 2,293,760 and writes 2,162,688 elements") {
  const nlohmann::json j = run_json("count --algo standard --json " + kWorked);
  CHECK(u64_at(j, "hbm.total_read_bytes") == 2'293'760ull * 4);
  CHECK(u64_at(j, "hbm.total_write_bytes") == 2'162'688ull * 4);
  // FA1 Alg. 0: read Q, K, write S; read S, write P; read P, V, write O.
  check_tensors(j, {{"Q", N * d * e}, {"K", N * d * e}, {"V", N * d * e}, {"S", N * N * e}, {"P", N * N * e}},
                {{"S", N * N * e}, {"P", N * N * e}, {"O", N * d * e}});
}

TEST_CASE("count --json, cases R6: V2 top-left causal visits 136 of 256 tiles, reads 1,179,648 elements") {
  const nlohmann::json j = run_json("count --algo v2 --mask causal --json " + kWorked);
  CHECK(u64_at(j, "hbm.total_read_bytes") == 1'179'648ull * 4);
  CHECK(u64_at(j, "tiles.total") == 256);
  CHECK(u64_at(j, "tiles.visited") == 136);   // 16 * 17 / 2: tiles with j <= i
  CHECK(u64_at(j, "tiles.partial") == 16);    // the diagonal j = i (B_r = B_c)
  CHECK(u64_at(j, "tiles.full") == 120);      // j < i
  CHECK(u64_at(j, "tiles.skipped") == 120);   // j > i
  CHECK(u64_at(j, "flops.matmul") == 136ull * 4 * 64 * 64 * 64);
  CHECK(j.at("config").at("mask") == "causal");
}

TEST_CASE("count --json: batch and heads multiply the traffic, V2's grid is T_r * batch * heads") {
  const nlohmann::json j = run_json("count --algo v2 --batch 2 --heads 3 --json " + kWorked);
  CHECK(u64_at(j, "hbm.total_read_bytes") == 6 * 2'162'688ull * 4);
  CHECK(u64_at(j, "hbm.total_write_bytes") == 6 * 66'560ull * 4);
  CHECK(u64_at(j, "tiles.visited") == 6 * 256);
  CHECK(u64_at(j, "grid.blocks") == 6 * T);
  const nlohmann::json v1 = run_json("count --algo v1 --batch 2 --heads 3 --json " + kWorked);
  CHECK(u64_at(v1, "grid.blocks") == 6);
}

TEST_CASE("count --json: --seq sets N_q = N_k, --nq overrides it, fp16 halves Q K V O bytes") {
  const nlohmann::json j = run_json("count --seq 512 --nq 256 --d 64 --br 64 --bc 64 --dtype fp16 --json");
  CHECK(j.at("config").at("n_q") == 256);
  CHECK(j.at("config").at("n_k") == 512);
  // V2: Q once (256 x 64), K and V once per Q block (T_r = 4), at 2 bytes
  CHECK(u64_at(j, "hbm.read_bytes.Q") == 256ull * 64 * 2);
  CHECK(u64_at(j, "hbm.read_bytes.K") == 4ull * 512 * 64 * 2);
  CHECK(u64_at(j, "hbm.write_bytes.L") == 256ull * 4);
}

TEST_CASE("count --json: a model preset fills heads, d, N and mask, explicit flags override it") {
  const nlohmann::json j = run_json("count --model gpt2-small --json");
  CHECK(j.at("config").at("heads") == 12);
  CHECK(j.at("config").at("d") == 64);
  CHECK(j.at("config").at("n_q") == 1024);
  CHECK(j.at("config").at("mask") == "causal-br");  // = top-left while N_q = N_k
  CHECK(j.at("config").at("model") == "gpt2-small");
  const nlohmann::json o = run_json("count --model gpt2-small --heads 1 --mask none --seq 2048 --json");
  CHECK(o.at("config").at("heads") == 1);
  CHECK(o.at("config").at("mask") == "none");
  CHECK(o.at("config").at("n_k") == 2048);
}

// A decode step with a model preset: one new query row against the 8,192 cached keys. Bottom-right
// causal lets it see all of them, so V2 reads every K/V block once per head: 2 x 8192 x 128 x 2 bytes
// x 32 heads = 134,217,728 bytes of K and V, over T_c = 8192 / 128 = 64 visited tiles per head
// (top-left causal would let it see key 0 only: one tile).
TEST_CASE("count --model llama3-8b --nq 1: the decode row sees the whole cache (bottom-right causal)") {
  const nlohmann::json j = run_json("count --model llama3-8b --nq 1 --algo v2 --br 128 --bc 128 --json");
  CHECK(j.at("config").at("mask") == "causal-br");
  CHECK(u64_at(j, "hbm.read_bytes.K") + u64_at(j, "hbm.read_bytes.V") == 2ull * 8192 * 128 * 2 * 32);
  CHECK(u64_at(j, "tiles.visited") == 64ull * 32);
}

// FA2's window_size = (left, -1): -1 is no limit on that side. window:-1,0 is causal-br and
// window:-1,-1 no mask, to the byte; a value under -1 is refused.
TEST_CASE("count --mask window:L,-1 and -1,R: an unbounded side, as FA2 writes it") {
  const std::string base = "count --algo v2 --nq 300 --nk 1000 --d 64 --br 64 --bc 64 --json --mask ";
  const auto hbm = [&](const std::string& mask) { return u64_at(run_json(base + mask), "hbm.total_bytes"); };
  CHECK(hbm("window:-1,0") == hbm("causal-br"));
  CHECK(hbm("window:-1,-1") == hbm("none"));
  CHECK(hbm("window:100,-1") < hbm("none"));
  // window:100,-1 is the band c >= r + (1000 - 300) - 100 = r + 600, nothing above. Q block i's first
  // row 64 i sees keys from 64 i + 600, so it skips the K/V blocks j with 64 j + 63 < 64 i + 600:
  // 9, 10, 11, 12, 13 for i = 0..4 — 55 of the 5 x 16 = 80 tiles that no mask visits
  const nlohmann::json w = run_json(base + "window:100,-1");
  CHECK(u64_at(run_json(base + "none"), "tiles.visited") == 80);
  CHECK(u64_at(w, "tiles.visited") == 80 - 55);
}

// Grouped-query attention: 8 query heads over H_k K/V heads, N = 1024, d = 64, fp16 (one head's Q, K
// or V: 1024 x 64 x 2 = 131,072 bytes). Every query head still requests its K/V head's blocks, so
// the papers' HBM bytes do not change; the L2 holds all of it (3 MiB of 60), so DRAM reads are the
// compulsory floor: Q of 8 heads and K, V of H_k heads.
TEST_CASE("count --kv-heads: requests per query head unchanged, DRAM reads K and V once per K/V head") {
  constexpr std::uint64_t kOne = 1024ull * 64 * 2;
  for (const char* algo : {"v2", "v1"}) {
    const std::string base = std::string("count --json --seq 1024 --d 64 --br 64 --bc 64 --heads 8 --algo ") + algo;
    const nlohmann::json mha = run_json(base);
    CHECK(mha.at("config").at("kv_heads") == 8);
    for (std::uint64_t hk : {8ull, 2ull, 1ull}) {
      INFO(algo << " H_k = " << hk);
      const nlohmann::json j = run_json(base + " --kv-heads " + std::to_string(hk));
      CHECK(j.at("config").at("kv_heads") == hk);
      CHECK(u64_at(j, "hbm.total_bytes") == u64_at(mha, "hbm.total_bytes"));
      CHECK(u64_at(j, "memory.dram.read_bytes.Q") == 8 * kOne);
      CHECK(u64_at(j, "memory.dram.read_bytes.K") == hk * kOne);
      CHECK(u64_at(j, "memory.dram.read_bytes.V") == hk * kOne);
    }
  }
}

TEST_CASE("count --kv-heads: a model preset's K/V heads, dropped by --heads, refused when they do not divide") {
  CHECK(run_json("count --json --model llama3-8b --seq 256").at("config").at("kv_heads") == 8);
  CHECK(run_json("count --json --model llama3-8b --seq 256 --heads 4").at("config").at("kv_heads") == 4);
  CHECK(run_json("count --json --model llama3-8b --seq 256 --heads 4 --kv-heads 2").at("config").at("kv_heads") == 2);
  const CliResult r = run_cli("count --heads 8 --kv-heads 3");
  CHECK(r.code == 2);
  CHECK(r.err.find("kv-heads = 3: an integer from 1 to heads (8) that divides heads") != std::string::npos);
}

TEST_CASE("count --br auto --bc auto: the V1 paper's rule from M (cases R5)") {
  // M = 49,152 bytes of fp32 = 12,288 elements; d = 64: B_c = ceil(12288 / 256) = 48, B_r = min(48, 64)
  const nlohmann::json j = run_json("count --algo v1 --sram 49152 --br auto --bc auto --d 64 --dtype fp32 --json");
  CHECK(j.at("config").at("b_c") == 48);
  CHECK(j.at("config").at("b_r") == 48);
  CHECK(u64_at(j, "sram.peak_bytes") == 46'080);
}

TEST_CASE("count table: exact bytes with human units, tile classes, config header") {
  const CliResult r = run_cli("count --algo v2 " + kWorked);
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("T_r = 16, T_c = 16") != std::string::npos);
  CHECK(r.out.find("B_r = 64, B_c = 64") != std::string::npos);
  CHECK(r.out.find("block skip on") != std::string::npos);
  CHECK(r.out.find("8,650,752 B (8.25 MiB)") != std::string::npos);  // 2,162,688 * 4 bytes read
  CHECK(r.out.find("266,240 B (260.00 KiB)") != std::string::npos);  // 66,560 * 4 bytes written
  CHECK(r.out.find("total 256, visited 256; full 256, partial 0, skipped 0") != std::string::npos);
  CHECK(r.out.find("268,435,456") != std::string::npos);  // matmul FLOPs
  CHECK(r.out.find("Grid: 16 thread blocks") != std::string::npos);
}

TEST_CASE("count --json launches: standard attention's three kernels, each with its grid and bytes") {
  // Worked example, fp32 (e = 4): FA1 Alg. 0 line 1 reads Q and K and writes S; line 2 reads S,
  // writes P; line 3 reads P and V, writes O. Grids of kernels/src/standard.cu: T_r, N_q, T_r
  // thread blocks per (batch, head); two heads here.
  const nlohmann::json j = run_json("count --algo standard --heads 2 --json " + kWorked);
  const nlohmann::json& l = j.at("launches");
  REQUIRE(l.size() == 3);
  const std::uint64_t h = 2, nd = h * N * d * e, nn = h * N * N * e;
  const char* names[] = {"standard_scores", "standard_softmax", "standard_output"};
  const std::uint64_t grid[] = {h * T, h * N, h * T}, read[] = {2 * nd, nn, nn + nd}, written[] = {nn, nn, nd};
  std::uint64_t read_sum = 0, write_sum = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    CHECK(l[k].at("name") == names[k]);
    CHECK(l[k].at("grid").get<std::uint64_t>() == grid[k]);
    CHECK(l[k].at("read_bytes").get<std::uint64_t>() == read[k]);
    CHECK(l[k].at("write_bytes").get<std::uint64_t>() == written[k]);
    read_sum += l[k].at("read_bytes").get<std::uint64_t>();
    write_sum += l[k].at("write_bytes").get<std::uint64_t>();
  }
  CHECK(read_sum == u64_at(j, "hbm.total_read_bytes"));
  CHECK(write_sum == u64_at(j, "hbm.total_write_bytes"));
  CHECK(u64_at(j, "grid.blocks") == h * (2 * T + N));
}

TEST_CASE("count --json launches: V1 and V2 are one launch each, summing to the totals") {
  for (const char* algo : {"v1", "v2"}) {
    CAPTURE(algo);
    const nlohmann::json j = run_json(std::string("count --algo ") + algo + " --batch 2 --heads 3 --json " + kWorked);
    const nlohmann::json& l = j.at("launches");
    REQUIRE(l.size() == 1);
    CHECK(l[0].at("name") == std::string(algo) + "_forward");
    CHECK(l[0].at("grid").get<std::uint64_t>() == (std::string(algo) == "v1" ? 6 : 6 * T));
    CHECK(l[0].at("read_bytes").get<std::uint64_t>() == u64_at(j, "hbm.total_read_bytes"));
    CHECK(l[0].at("write_bytes").get<std::uint64_t>() == u64_at(j, "hbm.total_write_bytes"));
  }
}

TEST_CASE("count --json memory levels: sectors as the kernels move them, SRAM and registers by placement") {
  // V2, worked example, fp32: rows of 256 bytes, so every Q K V O run is whole sectors; L rows of
  // 4 bytes in runs of 64 rows starting at multiples of 256 bytes: whole sectors too.
  const nlohmann::json j = run_json("count --algo v2 --json " + kWorked);
  CHECK(u64_at(j, "memory.sector.total_read_bytes") == u64_at(j, "hbm.total_read_bytes"));
  CHECK(u64_at(j, "memory.sector.total_write_bytes") == u64_at(j, "hbm.total_write_bytes"));
  // Q_i, K_j, V_j land in SRAM; O_i and L_i leave from registers
  CHECK(u64_at(j, "memory.sram.total_write_bytes") == u64_at(j, "hbm.total_read_bytes"));
  CHECK(u64_at(j, "memory.sram.total_read_bytes") == 0);
  CHECK(u64_at(j, "memory.registers.read_bytes.O") == N * d * e);
  CHECK(u64_at(j, "memory.registers.read_bytes.L") == N * 4);
}

TEST_CASE("count: FA2's d = 256 forward with 64 x 64 tiles fits 101,376 bytes for V2, not for V1") {
  // V2 keeps Q_i, K_j, V_j in SRAM: 3 * 64 * 256 * 2 = 98,304 bytes; V1 adds S_ij (8,192 bytes)
  const nlohmann::json j = run_json("count --d 256 --br 64 --bc 64 --sram 101376 --json");
  CHECK(u64_at(j, "sram.peak_bytes") == 98'304);
  const CliResult v1 = run_cli("count --algo v1 --d 256 --br 64 --bc 64 --sram 101376");
  CHECK(v1.code == 2);
  CHECK(v1.err.find("106496 bytes") != std::string::npos);
}

TEST_CASE("count table lists the launches, one line each") {
  const CliResult r = run_cli("count --algo standard " + kWorked);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("Launches (3):") != std::string::npos);
  for (const char* line : {"standard_scores      grid            16", "standard_softmax     grid         1,024",
                           "standard_output      grid            16"})
    CHECK(r.out.find(line) != std::string::npos);
}

TEST_CASE("count: a block that does not fit on an SM says so, never '0 blocks per SM -> 0 waves'") {
  // Issue 9 item 8. V1 (FA1 Alg. 1: Q_i, K_j, V_j and S_ij in SRAM), d = 64, fp16, 512 x 512 tiles:
  // (512*64 + 2*512*64 + 512*512) * 2 = 720,896 bytes, under M = 1,000,000 but over the H200's
  // 228 KiB = 233,472 bytes of shared memory per SM: no block is resident, no wave can run.
  const std::string args = "count --algo v1 --sram 1000000 --br 512 --bc 512 --d 64 --seq 1024 --dtype fp16";
  const CliResult r = run_cli(args);
  INFO(r.out, r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("0 blocks per SM") == std::string::npos);
  CHECK(r.out.find("0 waves") == std::string::npos);
  CHECK(r.out.find("Grid: 1 thread block; a block does not fit on an SM of h200: its SRAM peak 720,896 B (704.00 KiB) "
                   "is over the 233,472 B (228.00 KiB) of shared memory per SM -> no wave can run") != std::string::npos);
  const nlohmann::json j = run_json(args + " --json");
  CHECK(j.at("grid").at("fits_on_sm") == false);
  CHECK(u64_at(j, "grid.blocks_per_sm") == 0);
  // V2 keeps S_ij in registers: (512*64 + 2*512*64) * 2 = 196,608 bytes, one block per SM, T_r = 2
  // blocks, one wave on 132 SMs.
  const std::string v2 = "count --algo v2 --sram 1000000 --br 512 --bc 512 --d 64 --seq 1024 --dtype fp16";
  CHECK(run_cli(v2).out.find("Grid: 2 thread blocks; 1 block per SM on h200 (132 SMs) -> 1 wave\n") != std::string::npos);
  CHECK(run_json(v2 + " --json").at("grid").at("fits_on_sm") == true);
}

// docs/warps.md through the command line: V1 on N = 128, d = 16, B_r = B_c = 32, 4 warps, no
// mask (16 full tiles of r = c = 32; each warp owns r_w = 8 rows and c_w = 8 columns). The split
// changes no HBM byte and no block-level count, only the warp figures:
//   barriers per tile: split-Q 2 (K_j, V_j loaded; step done), split-K 5 (+1 after each of the
//     row max, row sum and P~V partials);
//   shared memory per tile, split-K: written 4 W r (d + 2) = 9,216 B, read 4 W r (W + d + 1) =
//     10,752 B; split-Q none;
//   extra operations per tile, split-K: max r (W - 1)^2 = 288, add (W - 1) r d = 1,536.
TEST_CASE("count --warp-split split-k against --warp-split split-q: the warp model's closed forms (docs/warps.md)") {
  const std::string small = "count --algo v1 --nq 128 --nk 128 --d 16 --br 32 --bc 32 --warps 4 --json ";
  const nlohmann::json q = run_json(small + "--warp-split split-q");
  const nlohmann::json k = run_json(small + "--warp-split split-k");
  const std::uint64_t tiles = 16, r = 32, dd = 16, W = 4;
  CHECK(u64_at(q, "warps.barriers") == 2 * tiles);
  CHECK(u64_at(q, "warps.smem_bytes") == 0);
  CHECK(u64_at(q, "warps.extra_ops_total") == 0);
  CHECK(u64_at(k, "warps.barriers") == 5 * tiles);
  CHECK(u64_at(k, "warps.smem_write_bytes") == tiles * 4 * W * r * (dd + 2));
  CHECK(u64_at(k, "warps.smem_read_bytes") == tiles * 4 * W * r * (W + dd + 1));
  CHECK(u64_at(k, "warps.smem_bytes") == tiles * 4 * W * r * (2 * dd + W + 3));
  CHECK(u64_at(k, "warps.extra_ops.max") == tiles * r * (W - 1) * (W - 1));
  CHECK(u64_at(k, "warps.extra_ops.add") == tiles * (W - 1) * r * dd);
  CHECK(u64_at(k, "warps.extra_ops_total") == tiles * (r * (W - 1) * (W - 1) + (W - 1) * r * dd));
  CHECK(k.at("config").at("split") == "split-k");
  for (const char* part : {"hbm", "tiles", "flops", "ops"}) CHECK(q.at(part) == k.at(part));

  // the table shows the same figures
  const CliResult t = run_cli("count --algo v1 --nq 128 --nk 128 --d 16 --br 32 --bc 32 --warps 4 --warp-split split-k");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("Warps: 4 per thread block, split-k") != std::string::npos);
  CHECK(t.out.find("barriers: 80") != std::string::npos);
  CHECK(t.out.find("shared memory written by warp reductions: 147,456 B (144.00 KiB)") != std::string::npos);
  CHECK(t.out.find("extra ops of the warp split: 29,184 (max 4,608, add 24,576)") != std::string::npos);
  const CliResult s = run_cli("count --algo standard --nq 128 --nk 128 --d 16 --br 32 --bc 32");
  CHECK(s.out.find("standard attention has no tile loop") != std::string::npos);
}

// --warp-split is the warp split; --split, its former name, is still read for a release: the same
// count, and a one-line notice on standard error only (scripts parse standard output).
TEST_CASE("count --split: the former name of --warp-split, with a notice on stderr") {
  const std::string small = "count --algo v1 --nq 128 --nk 128 --d 16 --br 32 --bc 32 --warps 4 --json ";
  const CliResult now = run_cli(small + "--warp-split split-q");
  const CliResult former = run_cli(small + "--split split-q");
  REQUIRE(now.code == 0);
  REQUIRE(former.code == 0);
  CHECK(now.err.empty());
  CHECK(former.err == "flashlab: --split is now --warp-split; --split will be removed\n");
  CHECK(nlohmann::json::parse(former.out) == nlohmann::json::parse(now.out));
  CHECK(nlohmann::json::parse(now.out).at("config").at("split") == "split-q");
  // not both names at once; --help shows only the new one
  const CliResult both = run_cli(small + "--split split-q --warp-split split-k");
  CHECK(both.code == 2);
  CHECK(both.err.find("flashlab: error: warp-split = split-q and split-k: one value: --split is the former name of "
                      "--warp-split") != std::string::npos);
  const CliResult help = run_cli("count --help");
  CHECK(help.out.find("--warp-split") != std::string::npos);
  CHECK(help.out.find("--split ") == std::string::npos);
}

TEST_CASE("the model: line names the flags given over the preset's values (issue 24: it described the preset only)") {
  const CliResult over = run_cli("count --model llama3-8b --mask causal --seq 1024");
  REQUIRE(over.code == 0);
  CHECK(over.out.find("model: Llama-3-8B: 32 query heads (8 KV heads), d = 128, context 8192, causal (bottom-right); "
                      "overridden: --seq 1024, --mask causal\n") != std::string::npos);
  const CliResult plain = run_cli("count --model llama3-8b --br 128 --bc 64");  // the tile is not the preset's
  REQUIRE(plain.code == 0);
  CHECK(plain.out.find("causal (bottom-right)\n") != std::string::npos);
  CHECK(plain.out.find("overridden") == std::string::npos);
}

// V3 through the command line, fp16 at d = 64 on V2's worked tile: V2's bytes (Q once, K and V T
// times), and a predicted time by V3's rules of the time model (issue 27 item 2: wgmma, the ring, the
// consumer warpgroups; docs/model.md "Time model"), said in both forms.
TEST_CASE("count --algo v3: V2's bytes on the same tile, and a predicted time, in text and JSON") {
  const std::string shape = "--nq 1024 --nk 1024 --d 64 --br 64 --bc 64 --scheduler grid ";
  const nlohmann::json j = run_json("count --algo v3 --json " + shape);
  CHECK(u64_at(j, "hbm.read_bytes.Q") == N * d * 2);
  CHECK(u64_at(j, "hbm.read_bytes.K") == T * N * d * 2);
  CHECK(u64_at(j, "hbm.read_bytes.V") == T * N * d * 2);
  CHECK(u64_at(j, "hbm.write_bytes.O") == N * d * 2);
  REQUIRE(j["predicted"]["time_s"].is_number());
  CHECK(j["predicted"]["time_s"].get<double>() > 0);
  CHECK(!j["predicted"].contains("not_modelled"));
  CHECK(j["config"]["stages"] == 2);
  CHECK(j["config"]["scheduler"] == "grid");
  const CliResult r = run_cli("count --algo v3 " + shape);
  CHECK(r.code == 0);
  CHECK(r.out.find("Predicted time on h200 (measured ceilings): ") != std::string::npos);
  CHECK(r.out.find("not modelled for v3: the time model") == std::string::npos);
  CHECK(r.out.find("the warp model (docs/warps.md) is not modelled for v3") != std::string::npos);
  CHECK(r.out.find("TFLOP/s") != std::string::npos);
}

// Where the command lists its algorithms it names V3 (issue 27): the top-level --help, and the metric
// catalogue's per-algorithm rules; V3's header line counts its consumer warpgroups in the right number
// (B_r / 64 of them: one at B_r = 64, two at 128).
TEST_CASE("the top-level help and metrics name V3, and count's header says 1 consumer warpgroup, 2 consumer warpgroups") {
  const CliResult help = run_cli("--help");
  CHECK(help.code == 0);
  CHECK(help.out.find("FlashAttention V1, V2 and V3 (--algo standard|v1|v2|v3") != std::string::npos);
  const CliResult metrics = run_cli("metrics");
  CHECK(metrics.out.find("V2 and V3 read Q_i once per Q block") != std::string::npos);
  CHECK(metrics.out.find("V3 as V2 with --scheduler grid and one per SM with persistent") != std::string::npos);
  const std::string shape = "count --algo v3 --nq 1024 --nk 1024 --d 64 --bc 64 ";
  const CliResult one = run_cli(shape + "--br 64");
  CHECK(one.out.find("(1 consumer warpgroup and a producer)") != std::string::npos);
  const CliResult two = run_cli(shape + "--br 128 --warp-specialize off");
  CHECK(two.out.find("(2 consumer warpgroups, no producer)") != std::string::npos);
}
