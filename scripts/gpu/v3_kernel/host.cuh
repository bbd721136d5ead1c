// host.cuh — host side of V3's staged kernel: tensor maps (cuTensorMapEncodeTiled), random inputs
// drawn on the device, and the float64 CPU reference of attention with its error measures.
//   make_map(ptr, B, N, H, D, rows, bf16): the 4-d tensor map (D, H, N, B) of a [B, N, H, D] tensor,
//     box (64, 1, rows, 1), 128-byte swizzle, out-of-bounds rows filled with zeros.
//   fill_normal(ptr, count, bf16, seed): standard normal values (Box-Muller on a counter hash).
//   reference_rows(...): O (double) and L of the listed (b, h, n) rows: softmax(q k^T * scale) v.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "../cuda_check.cuh"

namespace v3host {

inline CUtensorMap make_map(const void* ptr, int b, int n, int h, int d, int rows, bool bf16) {
  CUtensorMap m;
  const cuuint64_t dims[4] = {cuuint64_t(d), cuuint64_t(h), cuuint64_t(n), cuuint64_t(b)};
  const cuuint64_t strides[3] = {cuuint64_t(d) * 2, cuuint64_t(h) * d * 2, cuuint64_t(n) * h * d * 2};
  const cuuint32_t box[4] = {64, 1, cuuint32_t(rows), 1};
  const cuuint32_t elem[4] = {1, 1, 1, 1};
  const CUresult r = cuTensorMapEncodeTiled(&m, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                            4, const_cast<void*>(ptr), dims, strides, box, elem,
                                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d): B %d N %d H %d D %d rows %d\n", int(r), b, n, h, d, rows);
    std::exit(1);
  }
  return m;
}

__device__ __forceinline__ std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_normal_kernel(std::uint16_t* x, std::size_t count, bool bf16, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t r = splitmix(seed * 0x100000001B3ull + i);
    const float u1 = (float((r >> 40) & 0xFFFFFF) + 1.f) / 16777217.f, u2 = float(r & 0xFFFFFF) / 16777216.f;
    const float z = sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
    if (bf16) {
      const __nv_bfloat16 v = __float2bfloat16(z);
      x[i] = *reinterpret_cast<const std::uint16_t*>(&v);
    } else {
      const __half v = __float2half(z);
      x[i] = *reinterpret_cast<const std::uint16_t*>(&v);
    }
  }
}
inline void fill_normal(void* x, std::size_t count, bool bf16, std::uint64_t seed) {
  fill_normal_kernel<<<1024, 256>>>(static_cast<std::uint16_t*>(x), count, bf16, seed);
  CHECK(cudaGetLastError());
}

inline float to_float(std::uint16_t v, bool bf16) {
  if (bf16) {
    const std::uint32_t u = std::uint32_t(v) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  __half_raw raw;
  raw.x = v;
  return __half2float(__half(raw));
}

// A device tensor of `count` 16-bit values, as floats on the host.
inline std::vector<float> download(const void* dev, std::size_t count, bool bf16) {
  std::vector<std::uint16_t> h(count);
  CHECK(cudaMemcpy(h.data(), dev, count * 2, cudaMemcpyDeviceToHost));
  std::vector<float> f(count);
  for (std::size_t i = 0; i < count; ++i) f[i] = to_float(h[i], bf16);
  return f;
}

struct RowId {
  int b, h, n;
};

struct Errors {
  double max_abs = 0, rel_l2 = 0, lse_max_abs = 0;
  long long rows = 0, nonfinite = 0;
};

// Compare the device's O ([B, N, H, D] floats) and L ([B, H, N]) with float64 on the listed rows.
inline Errors check_rows(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                         const std::vector<float>& o, const std::vector<float>& lse, int B, int N, int H, int D,
                         bool causal, double scale, const std::vector<RowId>& rows) {
  (void)B;
  const unsigned nt = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<Errors> part(nt);
  std::vector<double> num(nt, 0), den(nt, 0);
  auto work = [&](unsigned t) {
    std::vector<double> s(N), acc(D);
    for (std::size_t r = t; r < rows.size(); r += nt) {
      const RowId id = rows[r];
      const int last = causal ? id.n : N - 1;
      const float* qr = &q[((std::size_t(id.b) * N + id.n) * H + id.h) * D];
      double mx = -INFINITY;
      for (int c = 0; c <= last; ++c) {
        const float* kr = &k[((std::size_t(id.b) * N + c) * H + id.h) * D];
        double x = 0;
        for (int e = 0; e < D; ++e) x += double(qr[e]) * kr[e];
        s[c] = x * scale;
        mx = std::max(mx, s[c]);
      }
      double l = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int c = 0; c <= last; ++c) {
        const double pr = std::exp(s[c] - mx);
        l += pr;
        const float* vr = &v[((std::size_t(id.b) * N + c) * H + id.h) * D];
        for (int e = 0; e < D; ++e) acc[e] += pr * vr[e];
      }
      const float* orow = &o[((std::size_t(id.b) * N + id.n) * H + id.h) * D];
      for (int e = 0; e < D; ++e) {
        const double ref = acc[e] / l, got = orow[e];
        if (!std::isfinite(got)) ++part[t].nonfinite;
        part[t].max_abs = std::max(part[t].max_abs, std::fabs(got - ref));
        num[t] += (got - ref) * (got - ref);
        den[t] += ref * ref;
      }
      const double lref = mx + std::log(l), lgot = lse[(std::size_t(id.b) * H + id.h) * N + id.n];
      if (!std::isfinite(lgot)) ++part[t].nonfinite;
      part[t].lse_max_abs = std::max(part[t].lse_max_abs, std::fabs(lgot - lref));
      ++part[t].rows;
    }
  };
  std::vector<std::thread> th;
  for (unsigned t = 0; t < nt; ++t) th.emplace_back(work, t);
  for (auto& x : th) x.join();
  Errors e;
  double nn = 0, dd = 0;
  for (unsigned t = 0; t < nt; ++t) {
    e.max_abs = std::max(e.max_abs, part[t].max_abs);
    e.lse_max_abs = std::max(e.lse_max_abs, part[t].lse_max_abs);
    e.rows += part[t].rows;
    e.nonfinite += part[t].nonfinite;
    nn += num[t];
    dd += den[t];
  }
  e.rel_l2 = std::sqrt(nn / dd);
  if (e.nonfinite) e.max_abs = e.rel_l2 = NAN;
  return e;
}

}  // namespace v3host
