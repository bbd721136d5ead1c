// hw_bytes.cpp — the kernels' sector bytes against the simulator's request bytes, explained (hw_bytes.hpp).
#include "hw_bytes.hpp"

namespace flashlab::gpu {
namespace {

std::string reason(const Problem& p, Tensor t) {
  switch (t) {
    case Tensor::K: case Tensor::V:
      return std::string("each of the T_r = ") + std::to_string(p.tiling.t_r()) + " thread blocks of the " +
             (t == Tensor::K ? "S = Q K^T" : "O = P V") +
             " kernel streams it through SRAM; Algorithm 0 reads it once (DRAM bytes stay near that: L2 "
             "serves the re-reads)";
    case Tensor::S: case Tensor::P:
      return "each row of N_k elements is moved in whole 32-byte sectors (rows padded to 16 elements)";
    case Tensor::l: case Tensor::m: case Tensor::L: case Tensor::Lacc:
      return "fp32 rows moved 32 per warp request; a run that starts or ends inside a 32-byte sector "
             "counts the whole sector";
    default: return "not expected: the kernels move these rows exactly";
  }
}

}  // namespace

std::vector<ByteDifference> explain_differences(const Problem& p, const TensorBytes& sim, const TensorBytes& kernel) {
  std::vector<ByteDifference> out;
  for (int x = 0; x < kTensorCount; ++x)
    for (int w = 0; w < 2; ++w)  // atomics (the backward's dQacc) are compared by scripts/gpu/ncu.py
      if (sim[x][w] != kernel[x][w])
        out.push_back({Tensor(x), w == 1, sim[x][w], kernel[x][w], reason(p, Tensor(x))});
  return out;
}

}  // namespace flashlab::gpu
