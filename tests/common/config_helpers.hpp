// config_helpers.hpp — the configurations tests build by hand, in one place (header-only, so that
// every test binary can use it without linking tests/common).
#pragma once

#include <cstdint>

#include "flashlab/config/config.hpp"

namespace flashlab::test {

/// A config with explicit sizes: algorithm, N_q x N_k, d, B_r x B_c, mask; fp16 (Config's default
/// dtype), everything else as Config leaves it.
inline Config small(Algo a, std::int64_t n_q, std::int64_t n_k, std::int64_t d, std::int64_t b_r, std::int64_t b_c,
                    Mask m = {}) {
  Config c;
  c.algo = a;
  c.n_q = n_q;
  c.n_k = n_k;
  c.d = d;
  c.b_r = b_r;
  c.b_c = b_c;
  c.mask = m;
  c.dtype = Dtype::fp16;
  return c;
}

}  // namespace flashlab::test
