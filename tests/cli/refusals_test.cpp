// What a new user found accepted and wrong (wrong numbers, an internal error, switches with no
// effect), now refused at config resolution with the field, the value and what is allowed (exit 2,
// nothing on stdout), or accepted and right. Each case failed before: the backward with the other
// order's forward printed NaN and FAIL (exit 0); FA2's backward with grouped K/V heads stopped with
// an internal error (exit 4) after half a table; trace refused FA2's own backward tile; the
// switches below were taken and ignored (exit 0).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

const std::string kV2Why =
    "q-outer with --algo v2 --pass backward: V2's backward (FA2 Alg. 2) reads L, which only the Q outer forward "
    "writes (the K/V outer forward writes l and m); other orders run with --pass forward";
const std::string kV1Why =
    "kv-outer with --algo v1 --pass backward: V1's backward (FA1 Alg. 4) reads l and m, which only the K/V outer "
    "forward writes (the Q outer forward writes L); other orders run with --pass forward";

}  // namespace

TEST_CASE("a backward after the other order's forward is refused: it would read statistics no launch wrote") {
  // run names the algorithm: another algorithm (V1) takes --order kv-outer --pass backward
  check_refused("run --algo v2 --order kv-outer --pass backward --seq 256", "order (algo v2) = kv-outer: " + kV2Why);
  for (const char* dtype : {"fp16", "bf16", "fp32"})
    for (const char* form : {"released", "paper", "deterministic"})
      check_refused(std::string("run --algo v2 --order kv-outer --pass backward --seq 256 --dtype ") + dtype +
                        " --backward-form " + form,
                    "order (algo v2) = kv-outer: " + kV2Why);
  check_refused("run --algo v1 --order q-outer --pass backward --seq 256", "order (algo v1) = q-outer: " + kV1Why);
  check_refused("count --algo v2 --order kv-outer --pass backward --seq 256", "order = kv-outer: " + kV2Why);
  check_refused("count --algo v1 --order q-outer --pass backward --seq 256", "order = q-outer: " + kV1Why);
  check_refused("trace --algo v2 --order kv-outer --pass backward --seq 256 -o x.trace", "order = kv-outer: " + kV2Why);
  std::string both = kV2Why;
  both.replace(both.find("--pass backward"), 15, "--pass both");
  check_refused("count --algo v2 --order kv-outer --pass both --seq 256", "order = kv-outer: " + both);
  check_refused("sweep --algos v2 --order kv-outer --pass backward --over seq --values 256,512",
                "order (algo v2, sweep point n = 256) = kv-outer: " + kV2Why);
}

TEST_CASE("a backward with its own order and other switches changed still runs, within its tolerance") {
  for (const char* args : {"run --algo v1 --grid qblock --rescale delayed --pass backward --seq 256",
                           "run --algo v2 --grid head --rescale step --pass backward --seq 256",
                           "run --algo v2 --order kv-outer --pass forward --seq 256"}) {
    const CliResult r = run_cli(args);
    INFO("flashlab ", args, "\n", r.out, r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("FAIL") == std::string::npos);
    CHECK(r.out.find("nan") == std::string::npos);
  }
}

TEST_CASE("FA2's backward with grouped K/V heads: refused by run before any output, counted by count") {
  const std::string why =
      "with --kernel fa2 --pass backward in run: FA2's backward sums each group's dK, dV over its query heads "
      "(at::sum), and the numerics walk one (batch, head); `flashlab count` and `trace` count it, or leave "
      "--kernel fa2 out";
  check_refused("run --kernel fa2 --model llama3-8b --nq 1 --pass backward", "kv-heads = 8: heads (32) " + why);
  check_refused("run --kernel fa2 --nq 64 --nk 512 --heads 8 --kv-heads 2 --pass backward",
                "kv-heads = 2: heads (8) " + why);
  CHECK(run_cli("count --kernel fa2 --model llama3-8b --nq 1 --pass backward").code == 0);
  CHECK(run_cli("run --kernel fa2 --nq 64 --nk 512 --heads 8 --kv-heads 8 --pass backward").code == 0);
}

TEST_CASE("trace --kernel fa2 --pass backward writes FA2's own tile, and another tile is refused naming FA2's") {
  const std::string dir = make_temp_dir();
  // FA2's backward tile (fa2_backward_traits): 64 x 128 at d = 128, 128 x 128 at d = 64
  for (const auto& [d, tile] : {std::pair{"128", "B_r = 64, B_c = 128"}, std::pair{"64", "B_r = 128, B_c = 128"}}) {
    const std::string path = dir + "/fa2_bwd_d" + d + ".trace";
    const CliResult r = run_cli(std::string("trace --kernel fa2 --pass backward --seq 512 --d ") + d + " -o " + path);
    INFO(r.out, r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find(tile) != std::string::npos);
    CHECK(run_cli("diff " + path + " " + path).code == 0);  // the header reads back: its tile is FA2's own
  }
  CHECK(run_cli("count --kernel fa2 --pass backward --seq 512 --d 128 --br 64 --bc 128").code == 0);
  // the V1 paper's SRAM rule (--br auto) is no tile of FA2's kernels, forward or backward
  check_refused("count --kernel fa2 --seq 512 --br auto --bc auto",
                "br/bc = auto: FA2's own tile with --kernel fa2 (leave --br and --bc out: kBlockM x kBlockN for d), "
                "or B_r and B_c as numbers");
  check_refused("count --kernel fa2 --pass backward --seq 512 --br auto --bc auto",
                "br/bc = auto: FA2's own tile with --kernel fa2 --pass backward (leave --br and --bc out: kBlockM x "
                "kBlockN for d)");
  check_refused("count --kernel fa2 --pass backward --seq 512 --d 128 --br 32",
                "br/bc = 32 x 128: 64 x 128 with --kernel fa2 --pass backward at d = 128: FA2's own tile "
                "(kBlockM x kBlockN for d; leave --br and --bc out)");
}

TEST_CASE("a switch the algorithm does not take is refused, naming the algorithms that take it") {
  const std::string standard_loop =
      ": none with --algo standard: it is a switch of --algo v1 and v2 (standard attention walks no tiles: it has "
      "no loop order, grid, rescaling or warp split to change)";
  const std::string v3_loop =
      ": none with --algo v3: it is a switch of --algo v1 and v2 (FA3 keeps FA2's loop: q-outer, qblock, delayed, "
      "split-q; its own switches are --warp-specialize, --stages, --pingpong, --intra-overlap, --scheduler)";
  check_refused("count --algo standard --block-skip on --mask causal",
                "block-skip = on: none with --algo standard: it is a switch of --algo v1, v2 (and v3: on only); "
                "standard attention computes every score, it has no tiles to skip");
  check_refused("count --algo standard --order kv-outer", "order = kv-outer" + standard_loop);
  check_refused("count --algo standard --grid head", "grid = head" + standard_loop);
  check_refused("count --algo standard --rescale step", "rescale = step" + standard_loop);
  check_refused("count --algo standard --warp-split split-k", "warp-split = split-k" + standard_loop);
  check_refused("count --algo v3 --order q-outer", "order = q-outer" + v3_loop);  // V2's value too: no effect
  check_refused("count --algo v3 --grid head", "grid = head" + v3_loop);
  check_refused("count --algo v3 --rescale delayed", "rescale = delayed" + v3_loop);
  check_refused("count --algo v3 --warp-split split-q", "warp-split = split-q" + v3_loop);
  // taken: V3's block skip (on), and a switch of a command that runs several algorithms is V1's and V2's
  CHECK(run_cli("count --algo v3 --block-skip on").code == 0);
  const nlohmann::json j = run_json("compare --block-skip on --seq 256 --json");
  CHECK(j.at("algos").at("v1").at("config").at("block_skip") == true);  // V1's preset is off
  CHECK(j.at("algos").at("standard").at("config").at("block_skip") == false);
}
