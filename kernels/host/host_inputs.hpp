// host_inputs.hpp — the host side of a run's inputs (runner.cpp): Q, K, V (and the backward's dO)
// as bits of the input type for every (batch, head), drawn as `flashlab run` draws them, and the
// heads whose outputs are checked against float64.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "flashlab/trace/trace.hpp"

namespace flashlab::gpu {

/// fp32 <-> the 16 bits of an fp16 or bf16 element (round to nearest even).
std::uint16_t to_bits(float x, Dtype t);
float from_bits(std::uint16_t b, Dtype t);

/// The heads whose O and L (or gradients) are checked: `wanted`, or all when the float64 reference is
/// cheap, else 2; evenly spread, the first and the last included.
std::vector<std::int64_t> checked_heads(const Problem& p, int wanted);

struct HostInputs {
  std::vector<std::uint16_t> q, k, v;            // Q (bh, N_q, d), K and V (batch * H_k, N_k, d): bits of the input type
  std::vector<std::uint16_t> d_o;                // (bh, N_q, d): the backward's dO (random, the head's seed)
  std::vector<std::pair<std::int64_t, Inputs>> kept;  // the checked heads' inputs
};

/// Every head's inputs (head bh: seed + bh; under grouped-query attention a group's query heads
/// share the K/V head of its first), with the `keep` heads' kept as matrices for the checks.
HostInputs make_host_inputs(const Problem& p, const InputSpec& spec, const std::vector<std::int64_t>& keep);

/// make_host_inputs, kept for the next call with the same shapes, fills, seed and kept heads (a
/// --configs file timing variants of one problem draws its inputs once). The reference stays valid
/// until the next call.
const HostInputs& cached_host_inputs(const Problem& p, const InputSpec& spec, const std::vector<std::int64_t>& keep);

}  // namespace flashlab::gpu
