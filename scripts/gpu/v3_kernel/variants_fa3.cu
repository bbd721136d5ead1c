// variants_fa3.cu — "fa3" (variants.cuh) for fp16 and bf16, d = 64 and 128, no mask and causal.
#include "variants.cuh"

namespace v3 {

std::vector<Entry> variants_fa3() {
  return {entry<CfgOf<false, 64, false>>("fa3"), entry<CfgOf<false, 64, true>>("fa3"),
          entry<CfgOf<false, 128, false>>("fa3"), entry<CfgOf<false, 128, true>>("fa3"),
          entry<CfgOf<true, 64, false>>("fa3"), entry<CfgOf<true, 64, true>>("fa3"),
          entry<CfgOf<true, 128, false>>("fa3"), entry<CfgOf<true, 128, true>>("fa3")};
}

}  // namespace v3
