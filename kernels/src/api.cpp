// api.cpp — the entry points of api.hpp: argument checks shared by the three algorithms, then the
// algorithm's own launcher.
#include "flashlab/kernels/api.hpp"

#include <string>

#include "flashlab/contract/error.hpp"
#include "launchers.hpp"
#include "tiles.hpp"

namespace flashlab::gpu {
namespace {

template <std::size_t N>
std::vector<TileShape> fitting(const TileShape (&list)[N], Kernel k, int d) {
  std::vector<TileShape> out;
  for (const TileShape& s : list)
    if (fits(k, s, d)) out.push_back(s);
  return out;
}

}  // namespace

std::vector<TileShape> compiled_tiles(Kernel k, int d) {
  if (d != 32 && d != 64 && d != 128) return {};
  switch (k) {
    case Kernel::standard: return fitting(kStandardTiles, k, d);
    case Kernel::v1: return fitting(kV1Tiles, k, d);
    case Kernel::v2: return fitting(kV2Tiles, k, d);
  }
  return {};
}

std::vector<const char*> kernel_names(Kernel k) {
  switch (k) {
    case Kernel::standard: return {"fl_standard_scores", "fl_standard_softmax", "fl_standard_output"};
    case Kernel::v1: return {"fl_v1_forward"};
    case Kernel::v2: return {"fl_v2_forward"};
  }
  return {};
}

void launch(Kernel k, const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  if (a.bh < 1 || a.bh > 65535)
    throw ConfigError("batch*heads", std::to_string(a.bh), "from 1 to 65535 (the grid's y dimension)");
  if (a.n_q < 1 || a.n_k < 1)
    throw ConfigError(a.n_q < 1 ? "nq" : "nk", std::to_string(a.n_q < 1 ? a.n_q : a.n_k), "at least 1");
  if (!(a.scale > 0)) throw ConfigError("scale", std::to_string(a.scale), "a finite number > 0");
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.o == nullptr)
    throw ConfigError("q/k/v/o", "null", "device pointers to the inputs and the output");
  switch (k) {
    case Kernel::standard:
      if (a.s == nullptr || a.p == nullptr)
        throw ConfigError("s/p", "null", "device buffers for S and P (standard attention writes them)");
      return launch_standard(a, trace, stream);
    case Kernel::v1:
      if (a.m == nullptr || a.l == nullptr)
        throw ConfigError("m/l", "null", "device buffers for m and l (V1 keeps them in HBM)");
      return launch_v1(a, trace, stream);
    case Kernel::v2:
      if (a.lse == nullptr) throw ConfigError("lse", "null", "a device buffer for L (V2 writes it)");
      return launch_v2(a, trace, stream);
  }
}

}  // namespace flashlab::gpu
