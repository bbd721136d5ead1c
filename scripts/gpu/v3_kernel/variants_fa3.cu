// variants_fa3.cu — "fa3" (variants.cuh) for fp16 and bf16, d = 64 and 128, no mask and causal; at d = 64
// both B_r (192, 128), chosen per launch by fa3_rows.
#include "variants.cuh"

namespace v3 {

std::vector<Entry> variants_fa3() {
  return {entry<CfgOf<false, 64, false>>("fa3"), entry<CfgOf<false, 64, true>>("fa3"),
          entry<CfgOf<false, 128, false>>("fa3"), entry<CfgOf<false, 128, true>>("fa3"),
          entry<CfgOf<true, 64, false>>("fa3"), entry<CfgOf<true, 64, true>>("fa3"),
          entry<CfgOf<true, 128, false>>("fa3"), entry<CfgOf<true, 128, true>>("fa3"),
          // d = 64 with B_r = 128: fa3_rows (variants.cuh) picks it by the work the 192-row tile wastes
          entry<CfgOf<false, 64, false, 2, true, true, true, 1, 128>>("fa3"),
          entry<CfgOf<false, 64, true, 2, true, true, true, 2, 128>>("fa3"),
          entry<CfgOf<true, 64, false, 2, true, true, true, 1, 128>>("fa3"),
          entry<CfgOf<true, 64, true, 2, true, true, true, 2, 128>>("fa3")};
}

}  // namespace v3
