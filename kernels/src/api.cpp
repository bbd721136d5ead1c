// api.cpp — the entry points of api.hpp: argument checks shared by the three algorithms, then the
// algorithm's own launcher.
#include "flashlab/kernels/api.hpp"

#include <string>

#include "flashlab/contract/error.hpp"
#include "launchers.hpp"
#include "tiles.hpp"

namespace flashlab::gpu {

std::vector<TileShape> compiled_tiles(Algo algo, int d) {
  std::vector<TileShape> out;
  for (int compiled_d : kHeadDims)
    if (d == compiled_d) {
      const TileList list = listed_tiles(algo);
      for (int k = 0; k < list.count; ++k)
        if (fits(algo, list.shape[k], d)) out.push_back(list.shape[k]);
    }
  return out;
}

void launch(Algo algo, const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  if (a.bh < 1 || a.bh > 65535)
    throw ConfigError("batch*heads", std::to_string(a.bh), "from 1 to 65535 (the grid's y dimension)");
  if (a.n_q < 1 || a.n_k < 1)
    throw ConfigError(a.n_q < 1 ? "nq" : "nk", std::to_string(a.n_q < 1 ? a.n_q : a.n_k), "at least 1");
  if (!(a.scale > 0)) throw ConfigError("scale", std::to_string(a.scale), "a finite number > 0");
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.o == nullptr)
    throw ConfigError("q/k/v/o", "null", "device pointers to the inputs and the output");
  switch (algo) {
    case Algo::standard:
      if (a.s == nullptr || a.p == nullptr)
        throw ConfigError("s/p", "null", "device buffers for S and P (standard attention writes them)");
      return launch_standard(a, trace, stream);
    case Algo::v1:
      if (a.m == nullptr || a.l == nullptr)
        throw ConfigError("m/l", "null", "device buffers for m and l (V1 keeps them in HBM)");
      return launch_v1(a, trace, stream);
    case Algo::v2:
      if (a.lse == nullptr) throw ConfigError("lse", "null", "a device buffer for L (V2 writes it)");
      return launch_v2(a, trace, stream);
  }
}

}  // namespace flashlab::gpu
