// comparison.cpp — see comparison.hpp.
#include "model/comparison.hpp"

#include <algorithm>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"

namespace flashlab::viz {

void Comparison::reset(const Config& c) {
  for (CompareSide& s : sides_) {
    Config ci = c;
    ci.algo = s.algo;
    s.analysis.reset();
    s.track.reset();
    s.error.clear();
    try {
      const Problem p = resolve(ci);
      s.analysis = std::make_unique<TileAnalysis>(p);
      s.track = std::make_unique<Track>(p, s.analysis->totals().steps);
    } catch (const ConfigError& e) {
      s.error = e.what();
    }
  }
}

std::uint64_t Comparison::total_steps() const {
  std::uint64_t n = 0;
  for (const CompareSide& s : sides_)
    if (s.track) n = std::max(n, s.track->total_steps());
  return n;
}

void Comparison::seek(std::uint64_t k) {
  for (CompareSide& s : sides_)
    if (s.track) s.track->seek(k);
}

const std::vector<std::string_view>& compare_keys() {
  static const std::vector<std::string_view> keys{
      "hbm_read_bytes", "hbm_write_bytes", "hbm_total_bytes", "flops_matmul",    "ops_exp",       "ops_mul",
      "ops_div",        "tiles_visited",   "steps",           "sram_peak_bytes", "grid_blocks",   "warp_smem_bytes",
      "warp_barriers",  "warp_extra_ops"};
  return keys;
}

}  // namespace flashlab::viz
