// presets.hpp — model presets (published attention shapes). GPU presets: gpu_spec.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/contract/tiling.hpp"

namespace flashlab {

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
