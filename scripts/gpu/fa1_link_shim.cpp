// fa1_link_shim.cpp — linked into FlashAttention-1's PyTorch extension by scripts/gpu/fa1_build.py,
// which compiles only FA1's forward kernels (csrc/flash_attn/src/fmha_fwd_hdim{32,64,128}.cu) to keep
// the build on the GPU machine short. FA1's fmha_api.cpp also binds the backward and the block-sparse
// forward, whose launchers live in .cu files that are not compiled; they are defined here so that the
// module links, and each throws if it is ever called. Nothing here is FA1 code; flashlab never links it.
#include <stdexcept>
#include <string>

#include "fmha.h"  // FA1's own header (the declarations of the launchers), from the FA1 source folder

namespace {
[[noreturn]] void not_built(const char* name) {
  throw std::runtime_error(std::string(name) + ": not built (scripts/gpu/fa1_build.py compiles FA1's forward only)");
}
}  // namespace

void run_fmha_bwd_hdim32(FMHA_dgrad_params&, cudaStream_t, const bool) { not_built("run_fmha_bwd_hdim32"); }
void run_fmha_bwd_hdim64(FMHA_dgrad_params&, cudaStream_t, const bool) { not_built("run_fmha_bwd_hdim64"); }
void run_fmha_bwd_hdim128(FMHA_dgrad_params&, cudaStream_t, const bool) { not_built("run_fmha_bwd_hdim128"); }
void run_fmha_block_fp16_sm80(Launch_params<FMHA_fprop_params>&, const bool) { not_built("run_fmha_block_fp16_sm80"); }
void run_fmha_block_dgrad_fp16_sm80(const FMHA_dgrad_params&, cudaStream_t) { not_built("run_fmha_block_dgrad_fp16_sm80"); }
