// hbm_sweep.hpp — HBM traffic of the current config against block size or SRAM size, for
// standard attention, V1 and V2: each point is the config with one field changed, resolved and
// counted by the simulator (flashlab::count). FA1 §3.2 (Theorem 2) predicts Θ(N² d² / M) HBM
// accesses for FlashAttention against Θ(N d + N²) for standard attention.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/config/config.hpp"

namespace flashlab::viz {

/// block: B_r = B_c = B, B = 16, 32, ... up to 1024 or the next power of two >= max(N_q, N_k).
/// sram:  M = 8, 16, ..., 256 KiB with the V1 paper's auto block sizes (FA1 Alg. 1 line 1).
enum class SweepAxis : std::uint8_t { block = 0, sram = 1 };
std::string_view to_string(SweepAxis a);

/// V1 and V2 points with more tiles than this are left out (each costs one walk of every tile).
inline constexpr std::int64_t kSweepTileLimit = std::int64_t(1) << 26;

/// The metric the sweep plots: catalogue key (flashlab/report/metrics.hpp) of HBM read + written.
inline constexpr const char* kSweepMetric = "hbm_total_bytes";

struct SweepPoint {
  std::int64_t x = 0;  // B in tokens, or M in bytes
  /// kSweepMetric (HBM bytes read + written, batch * heads included) by Algo (standard, v1, v2);
  /// empty when that algorithm cannot run the point, with the reason in `why`.
  std::array<std::optional<std::uint64_t>, 3> hbm;
  std::array<std::string, 3> why;
  std::array<std::int64_t, 3> b_r{}, b_c{};  // the tiles each algorithm resolved to
};

/// The x values of axis `a` for config `c`.
std::vector<std::int64_t> sweep_values(const Config& c, SweepAxis a);
/// One point: `c` with the axis field set to x, for each of the three algorithms.
SweepPoint sweep_point(const Config& c, SweepAxis a, std::int64_t x);
/// Every point of sweep_values(c, a).
std::vector<SweepPoint> sweep_hbm(const Config& c, SweepAxis a);

}  // namespace flashlab::viz
