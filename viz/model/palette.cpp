// palette.cpp — the viewer's colours (see palette.hpp).
#include "model/palette.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace flashlab::viz::palette {

std::uint32_t tile_colour(TileClass cls, bool computed) {
  switch (cls) {
    case TileClass::full: return full;
    case TileClass::partial: return partial;
    case TileClass::skipped: return computed ? computed_skipped : skipped;
  }
  return skipped;
}

std::uint32_t heat(double t) {
  // viridis at t = 0, 0.25, 0.5, 0.75, 1
  static constexpr std::array<std::array<double, 3>, 5> stops{{
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};
  if (!(t >= 0)) t = 0;
  t = std::min(t, 1.0) * double(stops.size() - 1);
  const auto k = std::min<std::size_t>(std::size_t(t), stops.size() - 2);
  const double f = t - double(k);
  auto mix = [&](int c) { return std::uint32_t(std::lround(stops[k][c] * (1 - f) + stops[k + 1][c] * f)); };
  return rgba(mix(0), mix(1), mix(2));
}

std::uint32_t warp_colour(int w) {
  static constexpr std::array<std::uint32_t, 8> hues{
      rgba(66, 133, 244), rgba(52, 168, 83), rgba(251, 188, 5), rgba(234, 67, 53),
      rgba(171, 71, 188), rgba(0, 172, 193), rgba(255, 112, 67), rgba(158, 157, 36)};
  return hues[std::size_t(w) % hues.size()];
}

std::uint32_t algo_colour(Algo a) {
  switch (a) {
    case Algo::standard: return rgba(200, 200, 200);
    case Algo::v1: return rgba(234, 67, 53);
    case Algo::v2: return rgba(66, 133, 244);
    case Algo::v3: return rgba(52, 168, 83);
  }
  return rgba(255, 255, 255);
}

std::uint32_t phase_colour(Phase ph) {
  switch (ph) {
    case Phase::gemm0: return rgba(66, 133, 244);
    case Phase::softmax: return rgba(251, 188, 5);
    case Phase::gemm1: return rgba(0, 172, 193);
    case Phase::load_q: return rgba(52, 168, 83);
    case Phase::load_k: return rgba(124, 179, 66);
    case Phase::load_v: return rgba(0, 121, 107);
    case Phase::store_o: return rgba(171, 71, 188);
    case Phase::wait_full: return rgba(234, 67, 53);
    case Phase::wait_empty: return rgba(255, 112, 67);
    case Phase::wait_barrier: return rgba(236, 64, 122);
    case Phase::wait_mma: return rgba(158, 157, 36);
    case Phase::step: return rgba(120, 144, 156);
  }
  return rgba(255, 255, 255);
}

bool is_wait(Phase ph) {
  return ph == Phase::wait_full || ph == Phase::wait_empty || ph == Phase::wait_barrier || ph == Phase::wait_mma;
}

}  // namespace flashlab::viz::palette
