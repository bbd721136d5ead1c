// presets.cpp — GPU datasheet figures and published model shapes. Sources: docs/model.md "Presets".
#include "flashlab/config/presets.hpp"

#include <array>

#include "flashlab/contract/error.hpp"

namespace flashlab {
namespace {

constexpr std::int64_t KiB = 1024;
constexpr std::int64_t MB = 1000 * 1000;

// NVIDIA A100 (SXM4 80 GB), H100 (SXM5) and H200 (SXM) datasheets and the CUDA C++ Programming
// Guide's compute-capability table (8.0: 164 KB smem/SM, 163 KB/block; 9.0: 228 KB/SM, 227 KB/block;
// 32 resident blocks and 64 resident warps per SM). The H200's L2 is what the device reports (60 MiB =
// 62,914,560 bytes, tests/data/gpu_ceilings/h200.json); H100's is the datasheet's 50 MB. The time
// model's rates are in ceilings.cpp (measured for the h200).
const std::array<GpuSpec, 3>& gpus() {
  static const std::array<GpuSpec, 3> table{{
      {"a100", 108, 164 * KiB, 163 * KiB, 32, 64, 40 * MB, 2.039e12, 312e12, 19.5e12},
      {"h100", 132, 228 * KiB, 227 * KiB, 32, 64, 50 * MB, 3.35e12, 989.4e12, 67e12},
      {"h200", 132, 228 * KiB, 227 * KiB, 32, 64, 60 * 1024 * KiB, 4.8e12, 989.4e12, 67e12},
  }};
  return table;
}

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

template <class Table>
std::string joined_names(const Table& t) {
  std::string s;
  for (const auto& e : t) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

}  // namespace

const GpuSpec& gpu_preset(std::string_view name) {
  for (const auto& g : gpus())
    if (g.name == name) return g;
  throw ConfigError("gpu", std::string(name), "one of " + joined_names(gpus()));
}

std::vector<std::string> gpu_preset_names() {
  std::vector<std::string> v;
  for (const auto& g : gpus()) v.push_back(g.name);
  return v;
}

const ModelSpec& model_preset(std::string_view name) {
  for (const auto& m : models())
    if (m.name == name) return m;
  throw ConfigError("model", std::string(name), "one of " + joined_names(models()));
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> v;
  for (const auto& m : models()) v.push_back(m.name);
  return v;
}

}  // namespace flashlab
