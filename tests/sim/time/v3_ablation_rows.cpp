// v3_ablation_rows.cpp — the V3 ablation rows as the tests read them (v3_ablation_rows.hpp).
#include "v3_ablation_rows.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

namespace flashlab::test {

nlohmann::json v3_data(const std::string& name) {
  const std::string path = std::string(FLASHLAB_TEST_DATA) + "/gpu_v3/" + name;
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return nlohmann::json::parse(in);
}

double median_time_ns(const nlohmann::json& row) {
  std::vector<double> t;
  for (const auto& k : row.at("kernels")) t.push_back(k.at("time_ns").get<double>());
  REQUIRE(!t.empty());
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

namespace {

bool same_shape(const nlohmann::json& a, const nlohmann::json& b) {
  for (const char* f : {"d", "mask", "n", "batch", "heads"})
    if (a.at(f) != b.at(f)) return false;
  return true;
}

}  // namespace

std::optional<Config> config_of(const nlohmann::json& row, const std::string& variant) {
  Config c;
  c.algo = Algo::v3;
  c.n_q = c.n_k = row.at("n").get<std::int64_t>();
  c.d = row.at("d").get<std::int64_t>();
  c.batch = row.at("batch").get<std::int64_t>();
  c.heads = row.at("heads").get<std::int64_t>();
  c.b_r = row.at("run").at("b_r").get<std::int64_t>();
  c.b_c = row.at("run").at("b_c").get<std::int64_t>();
  c.dtype = Dtype::fp16;
  if (row.at("mask") == "causal") c.mask = Mask{MaskKind::causal_tl, 0, 0};
  c.gpu = "h200";
  if (variant == "fa3") return c;
  if (variant == "stages1") c.stages = 1;
  else if (variant == "no_pingpong") c.pingpong = false;
  else if (variant == "no_overlap") c.intra_overlap = false;
  else if (variant == "grid") c.scheduler = TileScheduler::grid;
  else if (variant == "no_ws") c.warp_specialize = false, c.pingpong = false, c.scheduler = TileScheduler::grid;
  else return std::nullopt;
  return c;
}

const std::vector<AblationRow>& ablation_rows() {
  static const std::vector<AblationRow> rows = [] {
    const nlohmann::json abl = v3_data("v3_ablation.json"), ncu = v3_data("v3_ncu.json");
    std::vector<AblationRow> out;
    for (const auto& r : abl.at("rows")) {
      const std::string variant = r.at("variant").get<std::string>();
      const std::optional<Config> c = config_of(r, variant);
      if (!c || r.at("exit") != 0) continue;
      const nlohmann::json* base = nullptr;
      for (const auto& b : ncu.at("rows"))
        if (same_shape(b, r)) base = &b;
      REQUIRE_MESSAGE(base, "no v3_ncu.json row for an ablation row's shape");
      AblationRow a;
      a.variant = variant;
      a.name = variant + " d " + std::to_string(c->d) + " " + r.at("mask").get<std::string>() + " N " +
               std::to_string(c->n_q);
      a.config = *c;
      a.fa3 = *config_of(*base, "fa3");
      a.measured = median_time_ns(*base) / median_time_ns(r);
      out.push_back(a);
    }
    return out;
  }();
  return rows;
}

}  // namespace flashlab::test
