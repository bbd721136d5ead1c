// presets.hpp — GPU presets (datasheet figures) and model presets (published attention shapes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/contract/tiling.hpp"

namespace flashlab {

/// A GPU's figures, from its vendor datasheet unless noted (sources in docs/model.md).
struct GpuSpec {
  std::string name;
  int sms = 0;                          // streaming multiprocessors
  std::int64_t smem_per_sm = 0;         // shared memory per SM, bytes
  std::int64_t smem_per_block = 0;      // largest shared memory one block may use (opt-in), bytes
  int max_blocks_per_sm = 0;            // resident thread blocks per SM
  int max_warps_per_sm = 0;             // resident warps per SM
  std::int64_t l2_bytes = 0;            // L2 cache, bytes
  double hbm_bytes_per_s = 0;           // HBM bandwidth, bytes/s
  double fp16_tensor_flops = 0;         // dense fp16/bf16 tensor-core rate, FLOP/s
  double fp32_flops = 0;                // fp32 (non-tensor) rate, FLOP/s
};

/// The presets: "a100", "h100", "h200". Throws ConfigError for an unknown name.
const GpuSpec& gpu_preset(std::string_view name);
/// Names of all GPU presets, for help texts and errors.
std::vector<std::string> gpu_preset_names();

/// A model's attention layer as published (sources in docs/model.md).
struct ModelSpec {
  std::string name;         // CLI name, e.g. "llama3-8b"
  std::string description;  // e.g. "Llama-3-8B: 32 query heads, 8 KV heads, d = 128"
  std::int64_t heads = 0;   // query heads (the count that multiplies HBM traffic per head)
  std::int64_t kv_heads = 0;
  std::int64_t d = 0;       // head dimension
  std::int64_t context = 0; // trained context length (default sequence length)
  Mask mask;                // causal, or a sliding window
};

/// The presets: "gpt2-small", "llama3-8b", "mistral-7b". Throws ConfigError for an unknown name.
const ModelSpec& model_preset(std::string_view name);
std::vector<std::string> model_preset_names();

}  // namespace flashlab
