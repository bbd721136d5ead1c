// The mask definitions of docs/model.md "Tiles and masks" (visible <=> lo <= c - r <= hi, a band
// per mask), written element by element, independently of the band arithmetic in
// sim/include/flashlab/contract/tiling.hpp. Tests compare the library against this.
#pragma once

#include <cstdint>

#include "flashlab/contract/tiling.hpp"

namespace flashlab::test {

inline bool visible_by_definition(const Mask& m, std::int64_t n_q, std::int64_t n_k, std::int64_t r, std::int64_t c) {
  switch (m.kind) {
    case MaskKind::none: return true;
    case MaskKind::causal_tl: return c <= r;                     // top-left: c <= r
    case MaskKind::causal_br: return c <= r + n_k - n_q;         // bottom-right: c <= r + N_k - N_q
    case MaskKind::window: {                                     // -left <= c - r - (N_k - N_q) <= right
      const std::int64_t off = c - r - (n_k - n_q);
      return -m.left <= off && off <= m.right;
    }
  }
  return false;
}

}  // namespace flashlab::test
