// presets.cpp — published model shapes. Sources: docs/model.md "Presets".
#include "flashlab/config/presets.hpp"

#include <array>

#include "preset_table.hpp"

namespace flashlab {
namespace {

// Causal models take the bottom-right mask (FA2 >= 2.1's causal=True): with N_q = N_k it is the
// top-left one, and with N_q < N_k (a decode step or a prefill chunk against a KV cache) the new
// queries are the last N_q positions and see every cached key — top-left would hide the cache.
const std::array<ModelSpec, 3>& models() {
  static const std::array<ModelSpec, 3> table{{
      {"gpt2-small", "GPT-2 small: 12 heads, d = 64, context 1024, causal (bottom-right)", 12, 12, 64, 1024,
       Mask{MaskKind::causal_br, 0, 0}},
      {"llama3-8b", "Llama-3-8B: 32 query heads (8 KV heads), d = 128, context 8192, causal (bottom-right)", 32,
       8, 128, 8192, Mask{MaskKind::causal_br, 0, 0}},
      {"mistral-7b",
       "Mistral-7B v0.1: 32 query heads (8 KV heads), d = 128, context 8192, sliding window 4096 "
       "(each query sees itself and the 4095 keys before it)",
       32, 8, 128, 8192, Mask{MaskKind::window, 4095, 0}},
  }};
  return table;
}

}  // namespace

const ModelSpec& model_preset(std::string_view name) { return find_preset(models(), name, "model"); }

std::vector<std::string> model_preset_names() { return preset_names(models()); }

}  // namespace flashlab
