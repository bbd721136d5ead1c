// rounding.cpp — rounding fp32 values to the input dtype (round to nearest even).
//
// Eigen::half and Eigen::bfloat16 define the rounding. Eigen vectorises these casts only when the
// build targets AVX/F16C; this project builds for baseline x86-64, so on x86 CPUs that have F16C
// (every x86 CPU since 2012) fp16 goes through the F16C instructions, chosen at run time: their
// round-to-nearest-even conversion gives the same bits as Eigen::half (tests/sim/numerics checks it).
#include "flashlab/numerics/numerics.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define FLASHLAB_F16C 1
#endif

namespace flashlab {
namespace {

#if FLASHLAB_F16C
// n floats in place: fp32 -> fp16 (nearest even) -> fp32, 8 at a time.
__attribute__((target("avx,f16c"))) void round_fp16_f16c(float* x, Eigen::Index n) {
  Eigen::Index k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + k), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_ps(x + k, _mm256_cvtph_ps(h));
  }
  if (k == n) return;
  alignas(32) float tail[8] = {};
  for (Eigen::Index t = k; t < n; ++t) tail[t - k] = x[t];
  const __m128i h = _mm256_cvtps_ph(_mm256_load_ps(tail), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm256_store_ps(tail, _mm256_cvtph_ps(h));
  for (Eigen::Index t = k; t < n; ++t) x[t] = tail[t - k];
}

// CPUID leaf 1 reports AVX, F16C and OSXSAVE; XCR0 bits 1-2 say the OS saves the YMM state.
// (cpuid rather than __builtin_cpu_supports("f16c"), which clang 14 does not know.)
bool has_f16c() {
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    if (!(c & bit_AVX) || !(c & bit_F16C) || !(c & bit_OSXSAVE)) return false;
    unsigned xcr0_lo = 0, xcr0_hi = 0;
    __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    return (xcr0_lo & 6u) == 6u;
  }();
  return yes;
}
#endif

void round_fp16(Eigen::Ref<MatrixF> x) {
#if FLASHLAB_F16C
  if (has_f16c()) {
    if (x.outerStride() == x.cols()) {
      round_fp16_f16c(x.data(), x.size());
    } else {
      for (Eigen::Index r = 0; r < x.rows(); ++r) round_fp16_f16c(x.row(r).data(), x.cols());
    }
    return;
  }
#endif
  x = x.cast<Eigen::half>().cast<float>();
}

}  // namespace

void round_to_dtype(Dtype t, Eigen::Ref<MatrixF> x) {
  switch (t) {
    case Dtype::fp16: round_fp16(x); break;
    case Dtype::bf16: x = x.cast<Eigen::bfloat16>().cast<float>(); break;
    case Dtype::fp32: break;
  }
}

}  // namespace flashlab
