// field_docs.cpp — the configuration fields' documentation (field_docs.hpp): one entry per field.
#include "flashlab/config/field_docs.hpp"

#include <stdexcept>

#include "flashlab/config/config.hpp"
#include "flashlab/config/presets.hpp"

namespace flashlab {
namespace {

// "a | b | c": the names a field takes, as the table writes a choice.
std::string choices(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : " | ") + n;
  return s;
}

std::string text(std::string_view v) { return std::string(v); }

// The problem: algorithm, sizes, tile, SRAM, batch, heads, dtype and mask.
std::vector<FieldDoc> problem_docs(const Config& c) {
  const std::string seq_range = integer_range(1, kMaxSeq);
  const std::string block_range = integer_range(1, kMaxBlock) + ", or auto";
  const std::string auto_blocks =
      "auto: the V1 paper's rule from the SRAM size M, B_c = ceil(M/(4d)), B_r = min(B_c, d), shrunk to fit "
      "(FA1 Alg. 1 line 1)";
  return {
      {"--algo", "algo", "algorithm",
       "standard (FA1 Alg. 0) | v1 (FA1 Alg. 1) | v2 (FA2 Alg. 1) | v3 (FA3 Alg. 1, Hopper)", text(to_string(c.algo)),
       "v3: V2's loop with FA3's warp roles, K/V stage ring and asynchronous WGMMA; forward only, fp16/bf16"},
      {"--seq", "", "sequence length N_q = N_k", seq_range, "",
       "--nq or --nk given with it override their side (--seq 512 --nq 256: N_q = 256, N_k = 512)"},
      {"--nq", "n_q", "N_q, query rows", seq_range, std::to_string(c.n_q), ""},
      {"--nk", "n_k", "N_k, keys", seq_range, std::to_string(c.n_k), ""},
      {"--d", "d", "head dimension d", integer_range(1, kMaxD), std::to_string(c.d), ""},
      {"--br", "b_r", "B_r, query rows per tile", block_range, "FA2's tile for d (--algo v3: FA3's)", auto_blocks},
      {"--bc", "b_c", "B_c, keys per tile", block_range, "FA2's tile for d (--algo v3: FA3's)", auto_blocks},
      {"--sram", "sram_capacity_bytes", "SRAM capacity M in bytes", integer_range(1, kMaxSram),
       "the GPU's shared memory per block", ""},
      {"--batch", "batch", "batch size", seq_range, std::to_string(c.batch), ""},
      {"--heads", "heads", "attention heads", seq_range, std::to_string(c.heads), ""},
      {"--kv-heads", "kv_heads", "K/V heads H_k (grouped-query attention; 1: multi-query)",
       "an integer from 1 to heads that divides heads", "heads, or the model preset's",
       "heads / H_k query heads share each K/V head"},
      {"--dtype", "dtype", "input type", "fp16 | bf16 | fp32", text(to_string(c.dtype)),
       "accumulation is always fp32"},
      {"--mask", "mask", "which keys each query sees",
       "none | causal (top-left) | causal-br (bottom-right) | window:LEFT,RIGHT", to_string(c.mask),
       "causal: key c <= query r (FA1, PyTorch's is_causal); causal-br: c <= r + N_k - N_q (FA2 >= 2.1); "
       "window: -LEFT <= c - r - (N_k - N_q) <= RIGHT, -1 for no limit on that side"},
  };
}

// V1's and V2's loop switches, the pass, split-KV, whose launches, the scale and the warps.
std::vector<FieldDoc> loop_docs(const Config& c) {
  return {
      {"--block-skip", "block_skip", "skip tiles with no visible element (FA2 §3.1.1)", "on | off",
       "on for v2, off for v1 as in the V1 paper's dense kernel", ""},
      {"--order", "order", "loop order of v1/v2", "kv-outer | q-outer", "kv-outer for v1, q-outer for v2",
       "kv-outer reads and writes O_i, l_i, m_i in HBM at every step (FA1 Alg. 1), q-outer keeps them on chip and "
       "writes O_i, L_i once (FA2 Alg. 1)"},
      {"--grid", "grid", "grid of v1/v2", "head | qblock", "head for v1, qblock for v2",
       "one thread block per (batch, head) or per (batch, head, Q block)"},
      {"--rescale", "rescale", "when v1/v2 normalise O_i", "step | delayed", "step for v1, delayed for v2",
       "at every step (FA1 Alg. 1 line 12) or once at the end (FA2 Alg. 1 line 12)"},
      {"--pass", "pass", "which pass runs", "forward | backward | both", text(to_string(c.pass)),
       "the forward pass (O and L from Q, K, V), the backward pass (dQ, dK, dV from dO: FA1 Alg. 3/4, FA2 Alg. 2), "
       "or the forward's launches then the backward's"},
      {"--backward-form", "backward_form", "how v2's backward runs", "released | paper | deterministic",
       text(to_string(c.backward_form)),
       "as FA2's kernels run it (dQ accumulated in fp32 with atomics, three launches), as FA2 Alg. 2 prints it "
       "(dQ_i read and written at every step), or as FA2's kernels run it with deterministic=True "
       "(ceil(SMs / (batch x heads)) thread blocks per head, each adding into its own fp32 slice of dQacc, the "
       "slices summed in order)"},
      {"--splits", "splits", "split-KV, v2's K/V blocks in N splits", "an integer from 1 to 128, or auto",
       "1; with --kernel fa2, auto",
       "each split a thread block per Q block writing a partial O and L in fp32, merged by a combine launch "
       "(Flash-Decoding; FA2's splitkv kernels); auto: FA2's num_splits_heuristic on the GPU"},
      {"--kernel", "kernel", "whose launch choices to take", "flashlab | fa2", text(to_string(c.kernel)),
       "this project's kernels with the flags as given, or what FA2's mha_fwd launches (PyTorch's flash "
       "backend): FA2's tile per d, --splits auto, a decode step's grouped query heads folded into rows; with "
       "--pass backward what its mha_bwd launches: dot_do_o, the seqk-parallel main kernel, convert_dq on FA2's "
       "backward tile and 8 warps"},
      {"--scale", "scale", "softmax scale of S = scale * Q K^T", "a number > 0 (decimal and finite), e.g. 0.125",
       "1/sqrt(d)", ""},
      {"--warps", "warps", "warps per thread block", integer_range(1, 32),
       "4; 8 for V2's --pass backward on FA2's backward tile, the default one", ""},
      {"--warp-split", "split", "how the warps of a thread block share a tile", "split-q | split-k",
       "split-k for v1, split-q for v2",
       "split-q: warps own row slices of S_ij, no inter-warp reduction (FA2 §3.3); split-k: warps own column "
       "slices and reduce through shared memory (V1)"},
  };
}

// V3's switches (FA3's Hopper schedule).
std::vector<FieldDoc> hopper_docs() {
  return {
      {"--warp-specialize", "warp_specialize", "v3: a producer warp issues the TMA loads (FA3 §3.1)", "on | off",
       "on (FA3's)", "off: consumer warpgroup 0 issues them between its own GEMMs"},
      {"--stages", "stages", "v3: K/V buffers in the stage ring", "1 | 2 | 3", "2 (FA3's kStages)",
       "each stage holds one K_j and one V_j in SRAM, guarded by a full and an empty mbarrier"},
      {"--pingpong", "pingpong", "v3: consumer warpgroups take turns on the tensor cores (FA3 §3.1)", "on | off",
       "FA3's: on with two or more consumer warpgroups (B_r >= 128) and d <= 128",
       "named barriers order one warpgroup's GEMMs after the other's"},
      {"--intra-overlap", "intra_overlap", "v3: GEMM1 of block j issued after GEMM0 of block j + 1 (FA3 §3.2)",
       "on | off", "on (FA3's)", "softmax of block j + 1 overlaps P_j V_j within a warpgroup (FA3 Alg. 2)"},
      {"--scheduler", "scheduler", "v3: how thread blocks get their Q blocks", "grid | persistent",
       "persistent (FA3's)",
       "grid: one thread block per (batch, head, Q block); persistent: one per SM walking tiles b, b + SMs, ..., "
       "causal the longest Q blocks first"},
  };
}

// The presets: the GPU and a published model's attention layer.
std::vector<FieldDoc> preset_docs(const Config& c) {
  return {
      {"--gpu", "gpu", "GPU preset (datasheet figures: SMs, shared memory, HBM bandwidth)",
       choices(gpu_preset_names()), c.gpu, ""},
      {"--model", "model", "model preset, a published attention layer", choices(model_preset_names()) + " | none",
       "none",
       "fills heads, K/V heads, d, N_q = N_k and mask; flags given override it (--heads without --kv-heads: one "
       "K/V head per query head)"},
  };
}

std::vector<FieldDoc> make_docs() {
  const Config c;  // the defaults
  std::vector<FieldDoc> docs = problem_docs(c);
  for (const std::vector<FieldDoc>& more : {loop_docs(c), hopper_docs(), preset_docs(c)})
    docs.insert(docs.end(), more.begin(), more.end());
  return docs;
}

}  // namespace

const std::vector<FieldDoc>& field_docs() {
  static const std::vector<FieldDoc> docs = make_docs();
  return docs;
}

const FieldDoc& field_doc(std::string_view flag) {
  for (const FieldDoc& d : field_docs())
    if (d.flag == flag) return d;
  throw std::out_of_range("field_doc: no documentation for the flag " + std::string(flag) +
                          " (add it to sim/src/config/field_docs.cpp)");
}

std::string field_help(const FieldDoc& doc) {
  std::string s = doc.summary + ": " + doc.allowed;
  if (!doc.details.empty()) s += "; " + doc.details;
  if (!doc.fallback.empty()) s += " (default: " + doc.fallback + ")";
  return s;
}

std::string integer_range(std::int64_t lo, std::int64_t hi) {
  return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
}

}  // namespace flashlab
