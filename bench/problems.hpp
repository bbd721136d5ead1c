// problems.hpp — the problem bench_count, bench_l2 and bench_trace time, built in one place:
// V2, N_q = N_k = n, d = 128, B_r = B_c = 128, one head, fp16, the given mask (none by default).
#pragma once

#include <cstdint>

#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"

namespace flashlab::bench {

inline Problem v2_problem(std::int64_t n, Mask mask = {}) {
  Config c;
  c.algo = Algo::v2;
  c.n_q = c.n_k = n;
  c.d = 128;
  c.b_r = c.b_c = 128;
  c.mask = mask;
  return resolve(c);
}

}  // namespace flashlab::bench
