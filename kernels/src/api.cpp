// api.cpp — the entry points of api.hpp: argument checks shared by the three algorithms, then the
// algorithm's own launcher.
#include "flashlab/kernels/api.hpp"

#include <string>

#include "flashlab/contract/error.hpp"
#include "launchers.hpp"
#include "tiles.hpp"

namespace flashlab::gpu {

std::vector<TileShape> compiled_tiles(Algo algo, int d, Family f) {
  std::vector<TileShape> out;
  for (int compiled_d : kHeadDims)
    if (d == compiled_d) {
      const TileList list = family_tiles(algo, f, d);
      for (int k = 0; k < list.count; ++k)
        if (fits(algo, list.shape[k], d, f)) out.push_back(list.shape[k]);
    }
  return out;
}

namespace {

// The checks every launch shares: sizes, scale, the input and output pointers.
void check_common(const Args& a) {
  if (a.bh < 1 || a.bh > 65535)
    throw ConfigError("batch*heads", std::to_string(a.bh), "from 1 to 65535 (the grid's y dimension)");
  if (a.n_q < 1 || a.n_k < 1)
    throw ConfigError(a.n_q < 1 ? "nq" : "nk", std::to_string(a.n_q < 1 ? a.n_q : a.n_k), "at least 1");
  if (!(a.scale > 0)) throw ConfigError("scale", std::to_string(a.scale), "a finite number > 0");
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.o == nullptr)
    throw ConfigError("q/k/v/o", "null", "device pointers to the inputs and the output");
  if (a.group < 1 || a.bh % a.group != 0)
    throw ConfigError("group", std::to_string(a.group), "a divisor of batch*heads (query heads per K/V head)");
}

}  // namespace

void launch_backward(Algo algo, const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  check_common(a);
  if (a.group != 1)
    throw ConfigError("kv-heads", "grouped (" + std::to_string(a.group) + " query heads per K/V head)",
                      "one K/V head per query head for the backward kernels (dK and dV of a shared K/V head would "
                      "sum over its query heads; the simulator counts grouped-query attention's backward)");
  if (a.splits != 1) throw ConfigError("splits", std::to_string(a.splits), "1 for the backward kernels");
  if (a.d_o == nullptr || a.dq == nullptr || a.dk == nullptr || a.dv == nullptr)
    throw ConfigError("do/dq/dk/dv", "null", "device pointers to dO and the gradients");
  switch (algo) {
    case Algo::standard:
      throw ConfigError("algo", "standard", "v1 or v2 (the CUDA backward kernels; the simulator counts standard "
                                            "attention's backward)");
    case Algo::v1:
      if (a.deterministic) throw ConfigError("deterministic", "true", "false for V1 (FA2's deterministic backward is V2's)");
      if (a.m == nullptr || a.l == nullptr) throw ConfigError("m/l", "null", "V1's m and l as its forward wrote them");
      return launch_v1_backward(a, trace, stream);
    case Algo::v2:
      if (a.lse == nullptr || a.d_sum == nullptr || a.dq_acc == nullptr)
        throw ConfigError("lse/d_sum/dq_acc", "null", "L, and buffers for D and the fp32 dQ accumulator");
      if (a.dq_splits < 1 || (!a.deterministic && a.dq_splits != 1) || a.dq_splits > 65535)
        throw ConfigError("dq_splits", std::to_string(a.dq_splits),
                          "1 for the released backward; 1 to 65535 for the deterministic one (its grid's x)");
      return launch_v2_backward(a, trace, stream);
  }
}

void launch(Algo algo, const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  check_common(a);
  switch (algo) {
    case Algo::standard:
      if (a.splits != 1) throw ConfigError("splits", std::to_string(a.splits), "1 for standard attention");
      if (a.s == nullptr || a.p == nullptr)
        throw ConfigError("s/p", "null", "device buffers for S and P (standard attention writes them)");
      return launch_standard(a, trace, stream);
    case Algo::v1: case Algo::v2: break;
  }
  if (a.kv_outer && (a.m == nullptr || a.l == nullptr))
    throw ConfigError("m/l", "null", "device buffers for m and l (the K/V outer order keeps them in HBM)");
  if (!a.kv_outer && a.lse == nullptr) throw ConfigError("lse", "null", "a device buffer for L (the Q outer order writes it)");
  const bool v2 = !a.split_k && !a.kv_outer && a.rescale_delayed && !a.grid_head;
  if (const char* allowed = a.splits < 1 ? "an integer from 1 to 128 (FA2's limit)" : split_kv_refusal(a.splits, v2, true))
    throw ConfigError("splits", std::to_string(a.splits), allowed);
  if (a.split_k || a.kv_outer) return launch_v1(a, trace, stream);
  if (a.splits == 1) return launch_v2(a, trace, stream);
  if (a.o_acc == nullptr || a.lse_acc == nullptr)
    throw ConfigError("o_acc/lse_acc", "null", "device buffers for Oacc and Lacc (split-KV's partial results)");
  launch_v2_split(a, trace, stream);
}

}  // namespace flashlab::gpu
