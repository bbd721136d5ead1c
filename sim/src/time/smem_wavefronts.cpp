// smem_wavefronts.cpp — shared-memory wavefronts of access patterns that bank conflicts or narrow
// accesses make dearer than their bytes (smem_wavefronts.hpp).
#include "smem_wavefronts.hpp"

#include <algorithm>
#include <cmath>

#include "flashlab/memory/occupancy.hpp"

namespace flashlab::time_detail {
namespace {

constexpr double kWavefrontBytes = 128;  // one shared-memory wavefront: 32 banks of 4 bytes
constexpr double kLanes = 32;
constexpr double kPartialBytes = 4;  // fp32 partials of P~ V

bool softmax_row(const Launch& l) {
  const auto softmax = [](const std::vector<Action>& v) {
    return std::any_of(v.begin(), v.end(), [](const Action& a) { return a.op == Op::compute && a.eq == Eq::softmax_dense; });
  };
  return row_launch(l) && (softmax(l.body) || std::any_of(l.prologue.begin(), l.prologue.end(), softmax));
}

}  // namespace

double softmax_row_smem_bytes(const Problem& p, const Launch& l) {
  if (!softmax_row(l)) return 0;
  const double row = double((p.tiling.n_k + 7) / 8 * 8);
  const double load_row = 8.0 / kLanes;          // scalar fp32 stores, 8 lanes per bank
  const double exp_row = 2.0 / kLanes;           // one load and one store per element, conflict-free
  const double store_row = 8.0 / (4 * kLanes);   // two 16-byte loads per lane, lanes 32 bytes apart
  // the two block reductions: each warp stores its value (one wavefront), then reads the warps'
  // values back as one broadcast load (one): 2 x 4 x 2 wavefronts a row
  constexpr double kReductions = 2 * 4 * 2;
  return ((load_row + exp_row + store_row) * row + kReductions) * kWavefrontBytes;
}

double split_k_reduction_conflict_bytes(const Problem& p, std::int64_t rows) {
  if (p.split != WarpSplit::split_k || p.warps <= 1) return 0;
  const double w = double(p.warps), r = double(rows);
  const double pv_conflict = kPartialBytes * w * r * double(p.tiling.d);
  const double row_groups = std::ceil(r / 8);  // stores and loads of 8 rows, a wavefront each
  const double stat_stores = 2 * w * (row_groups * kWavefrontBytes - r * kPartialBytes);
  const double max_loads = w * w * (row_groups * kWavefrontBytes - r * kPartialBytes);
  return pv_conflict + stat_stores + max_loads;
}

double split_q_row_update_bytes(const Problem& p, std::int64_t rows) {
  if (p.split != WarpSplit::split_q || p.order != LoopOrder::kv_outer || p.backward()) return 0;
  return 3 * kPartialBytes * double(rows) * double(p.tiling.d);
}

}  // namespace flashlab::time_detail
