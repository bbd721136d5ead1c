// variants_ablation.cu — "fa3" with one switch changed (variants.cuh), fp16, d = 128 and 64, both masks.
#include "variants.cuh"

namespace v3 {

namespace {
template <int D, bool kC>
void add(std::vector<Entry>& v) {
  // template arguments: dtype bf16, D, causal, stages, warp_spec, pingpong, intra_overlap, scheduler, B_r at d 64
  v.push_back(entry<CfgOf<false, D, kC, 1>>("stages1"));
  v.push_back(entry<CfgOf<false, D, kC, 2, true, false>>("no_pingpong"));
  v.push_back(entry<CfgOf<false, D, kC, 2, true, true, false>>("no_overlap"));
  v.push_back(entry<CfgOf<false, D, kC, 2, true, true, true, 0>>("grid"));
  v.push_back(entry<CfgOf<false, D, kC, 2, true, true, true, 1>>("static"));
  v.push_back(entry<CfgOf<false, D, kC, 2, true, true, true, 2>>("dynamic"));
  v.push_back(entry<CfgOf<false, D, kC, 2, false, false, true, 0>>("no_ws"));
  if constexpr (D == 64) v.push_back(entry<CfgOf<false, D, kC, 2, true, true, true, kC ? 2 : 1, 128>>("br128"));
}
}  // namespace

std::vector<Entry> variants_ablation() {
  std::vector<Entry> v;
  add<128, false>(v);
  add<128, true>(v);
  add<64, false>(v);
  add<64, true>(v);
  return v;
}

}  // namespace v3
