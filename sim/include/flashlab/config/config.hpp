// config.hpp — what a user asks for (Config) and the validated problem the simulator runs (Problem).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "flashlab/config/presets.hpp"
#include "flashlab/contract/algo.hpp"
#include "flashlab/contract/tiling.hpp"

namespace flashlab {

/// Input element type; accumulation is always fp32.
enum class Dtype : std::uint8_t { fp16 = 0, bf16 = 1, fp32 = 2 };

/// How the warps of a thread block share a tile: split-K (V1: warps own column slices of S_ij)
/// or split-Q (V2: warps own row slices).
enum class WarpSplit : std::uint8_t { split_q = 0, split_k = 1 };

/// A configuration as a user gives it. Unset optionals take the documented defaults in resolve().
struct Config {
  Algo algo = Algo::v2;
  std::int64_t n_q = 1024;          // N_q, query rows
  std::int64_t n_k = 1024;          // N_k, keys
  std::int64_t d = 64;              // head dimension
  std::optional<std::int64_t> b_r;  // B_r; default: FA2's tile for d (see default_blocks)
  std::optional<std::int64_t> b_c;  // B_c
  bool auto_blocks = false;         // B_c = ceil(M/(4d)), B_r = min(B_c, d) (FA1 Alg. 1 line 1)
  std::optional<std::int64_t> sram_bytes;  // SRAM capacity M in bytes; default: GPU's per-block max
  std::int64_t batch = 1;
  std::int64_t heads = 1;
  Dtype dtype = Dtype::fp16;
  Mask mask;
  std::optional<bool> block_skip;   // default: on for V2, off for V1 (the V1 paper's dense kernel)
  std::optional<double> scale;      // softmax scale; default 1/sqrt(d)
  int warps = 4;                    // warps per thread block
  std::optional<WarpSplit> split;   // default: split-K for V1, split-Q for V2
  std::string gpu = "h200";
};

/// A validated, fully resolved configuration. Every field is concrete.
struct Problem {
  Algo algo = Algo::v2;
  Tiling tiling;
  Mask mask;
  Band band;
  std::int64_t batch = 1, heads = 1;
  Dtype dtype = Dtype::fp16;
  int e_in = 2;                     // bytes per element of Q K V O S P
  bool block_skip = true;
  double scale = 0.125;
  int warps = 4;
  WarpSplit split = WarpSplit::split_q;
  std::int64_t sram_capacity = 0;   // M, bytes
  GpuSpec gpu;

  std::int64_t bh() const { return batch * heads; }
};

/// Bytes per element of the input type: 2 for fp16/bf16, 4 for fp32.
int element_bytes(Dtype t);

/// FA2's forward tile for head dim d on Hopper (the kernels PyTorch 2.11 runs, shared/data):
/// d <= 64: 128 x 128; d <= 128: 128 x 64; larger: 64 x 64. Returns {B_r, B_c}.
std::pair<std::int64_t, std::int64_t> default_blocks(std::int64_t d);

/// The V1 paper's block sizes from SRAM size M (FA1 Alg. 1 line 1), M counted in elements:
/// B_c = ceil(M / (4d)), B_r = min(B_c, d). `m_bytes` / `e` gives M in elements.
std::pair<std::int64_t, std::int64_t> v1_auto_blocks(std::int64_t m_bytes, int e, std::int64_t d);

/// Validates `c` and fills in defaults. Throws ConfigError naming the field, the value and what
/// is allowed: sizes <= 0, B_r > N_q is allowed (ragged), d outside [1, 1024], warps outside
/// [1, 32], negative window sides, unknown GPU, tiles over the SRAM capacity (the bytes the
/// algorithm's schedule keeps in SRAM, schedule.hpp sram_bytes; the error gives the bytes
/// needed, the capacity and the largest square tiles that fit), counts that overflow 64 bits.
Problem resolve(const Config& c);

/// Names used in output and parsing.
std::string_view to_string(Algo a);
std::string_view to_string(Dtype t);
std::string_view to_string(WarpSplit s);
std::string to_string(const Mask& m);  // "none", "causal", "causal-br", "window:L,R"

/// Parsers for the command line; throw ConfigError(field, text, allowed).
Algo parse_algo(std::string_view text);
Dtype parse_dtype(std::string_view text);
Mask parse_mask(std::string_view text);
WarpSplit parse_split(std::string_view text);

}  // namespace flashlab
