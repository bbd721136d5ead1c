// sweep_plot.hpp — what `flashlab sweep --plot FILE.png` draws: HBM bytes (read + written)
// against the swept value, one line per algorithm; when M is swept, the FA1 Theorem 2 curve
// Θ(N²d²/M) beside them (N and d fixed, so a constant over M, scaled through V1's first point).
#pragma once

#include <cstdint>
#include <vector>

#include "flashlab/config/config.hpp"
#include "plot_image.hpp"
#include "sweep_axis.hpp"

namespace flashlab::cli {

/// One row of the sweep: the swept value, the resolved problem's algorithm and shape, its total
/// HBM bytes (read + written, batch * heads included).
struct SweepSample {
  std::int64_t value = 0;
  Algo algo = Algo::v2;
  std::int64_t n_q = 0, n_k = 0, d = 0, b_r = 0, b_c = 0;
  std::uint64_t hbm_bytes = 0;
};
SweepSample sweep_sample(std::int64_t value, const Problem& p, std::uint64_t hbm_bytes);

/// The plot of the samples (in sweep order; at least one). `first` is the first point's problem,
/// for the fields every point shares (mask, dtype, batch, heads). The title names the sizes that
/// stay fixed over the sweep; the Θ(N²d²/M) reference is added for Axis::sram, through the first
/// V1 sample (or the first sample when V1 is not swept).
Plot sweep_plot(Axis axis, const Problem& first, const std::vector<SweepSample>& samples);

}  // namespace flashlab::cli
