// Every row of tests/data/pytorch_fa2_h200_ncu.md (Nsight Compute counters measured on PyTorch's
// FA2 forward on an H200) is a test: the simulator's V2 global-load and
// global-store bytes must equal the measured ones to the printed precision (ncu prints MB with
// three decimals, i.e. to the nearest kilobyte).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"

using namespace flashlab;

namespace {

struct Row {
  std::int64_t batch, heads, n, d, b_r, b_c, warps;
  bool causal;
  double ld_mb, st_mb;
  std::string grid;
};

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  const auto b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<Row> read_rows() {
  std::ifstream f(FLASHLAB_TEST_DATA "/pytorch_fa2_h200_ncu.md");
  REQUIRE(f.good());
  std::vector<Row> rows;
  std::string line;
  while (std::getline(f, line)) {
    if (line.size() < 2 || line[0] != '|') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) cells.push_back(trim(cell));
    if (cells.size() < 10 || cells[0].empty() || !std::isdigit(static_cast<unsigned char>(cells[0][0]))) continue;
    Row r{};
    r.batch = std::stoll(cells[0]);
    r.heads = std::stoll(cells[1]);
    r.n = std::stoll(cells[2]);
    r.d = std::stoll(cells[3]);
    r.causal = cells[4] == "yes";
    // "128 x 64, 4"
    std::sscanf(cells[5].c_str(), "%ld x %ld, %ld", &r.b_r, &r.b_c, &r.warps);
    r.grid = cells[6];
    r.ld_mb = std::stod(cells[7]);
    r.st_mb = std::stod(cells[8]);
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("V2 predicts PyTorch FA2's global-memory bytes on the H200, every row of tests/data") {
  const std::vector<Row> rows = read_rows();
  REQUIRE(rows.size() == 4);  // the file's four measured configurations
  for (const Row& r : rows) {
    CAPTURE(r.batch);
    CAPTURE(r.heads);
    CAPTURE(r.n);
    CAPTURE(r.d);
    CAPTURE(r.causal);
    Config c;
    c.algo = Algo::v2;
    c.n_q = c.n_k = r.n;
    c.d = r.d;
    c.b_r = r.b_r;
    c.b_c = r.b_c;
    c.warps = int(r.warps);
    c.batch = r.batch;
    c.heads = r.heads;
    c.dtype = Dtype::fp16;
    c.mask = r.causal ? Mask{MaskKind::causal_tl, 0, 0} : Mask{};
    const Counters k = count(resolve(c));
    // ncu's MB are 10^6 bytes, printed with three decimals: equal to the nearest kilobyte.
    CHECK(std::fabs(double(k.cost.read_bytes()) / 1e6 - r.ld_mb) <= 0.0005 + 1e-9);
    CHECK(std::fabs(double(k.cost.write_bytes()) / 1e6 - r.st_mb) <= 0.0005 + 1e-9);
    // the grid (T_r, B, H) has T_r * B * H thread blocks
    std::int64_t gx = 0, gy = 0, gz = 0;
    std::sscanf(r.grid.c_str(), "(%ld,%ld,%ld)", &gx, &gy, &gz);
    CHECK(k.grid_blocks == gx * gy * gz);
  }
}
