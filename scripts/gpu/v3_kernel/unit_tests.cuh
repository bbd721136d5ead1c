// unit_tests.cuh — the pieces of V3's forward checked one at a time against the CPU, so a wrong result
// names its part: (1) the bulk tensor copy (4-d map, 128B swizzle, zero fill past the rows) feeding
// wgmma SS through K-major descriptors: C = A B^T, A 64 x D, B NN x D with only `valid` rows in
// memory; (2) wgmma RS with the A fragment from registers and B read N-major (transpose bit) through
// an MN-major descriptor: C = P V, P 64 x KK, V KK x D. fp16 inputs (normal), fp32 results, compared
// with float64: max |C - ref| and ||C - ref|| / ||ref||.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "host.cuh"
#include "layout.cuh"
#include "ptx.cuh"
#include "wgmma.cuh"

namespace v3unit {

template <int D, int NN>
__global__ void ss_kernel(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb, float* c) {
  extern __shared__ unsigned char raw[];
  const std::uint32_t base = (v3::smem_addr(raw) + 1023) & ~1023u;
  const std::uint32_t sa = base, sb = base + v3::tile_bytes(64, D), bar = sb + v3::tile_bytes(NN, D);
  if (threadIdx.x == 0) {
    v3::mbar_init(bar, 1);
    v3::fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    v3::mbar_arrive_expect_tx(bar, v3::tile_bytes(64, D) + v3::tile_bytes(NN, D));
    for (int ch = 0; ch < D / 64; ++ch) {
      v3::tma_load_4d(sa + ch * v3::chunk_bytes(64), &ma, bar, 64 * ch, 0, 0, 0);
      v3::tma_load_4d(sb + ch * v3::chunk_bytes(NN), &mb, bar, 64 * ch, 0, 0, 0);
    }
  }
  v3::mbar_wait(bar, 0);
  float acc[NN / 2];
  v3::reg_fence(acc);
  v3::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const int ch = kk / 4, off = (kk % 4) * 32;
    v3::wgmma_ss<NN, false, 0, 0>(acc, v3::desc_kmajor_sw128(sa + ch * v3::chunk_bytes(64) + off),
                                  v3::desc_kmajor_sw128(sb + ch * v3::chunk_bytes(NN) + off), kk > 0);
  }
  v3::wgmma_commit();
  v3::wgmma_wait<0>();
  v3::reg_fence(acc);
  const v3::Frag f(threadIdx.x);
#pragma unroll
  for (int i = 0; i < NN / 2; ++i) c[(f.row + ((i % 4) >= 2 ? 8 : 0)) * NN + 8 * (i / 4) + f.col + (i % 2)] = acc[i];
}

template <int D, int KK>
__global__ void rs_kernel(const std::uint16_t* pmat, const __grid_constant__ CUtensorMap mv, float* c) {
  extern __shared__ unsigned char raw[];
  const std::uint32_t base = (v3::smem_addr(raw) + 1023) & ~1023u;
  const std::uint32_t sv = base, bar = sv + v3::tile_bytes(KK, D);
  if (threadIdx.x == 0) {
    v3::mbar_init(bar, 1);
    v3::fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    v3::mbar_arrive_expect_tx(bar, v3::tile_bytes(KK, D));
    for (int ch = 0; ch < D / 64; ++ch) v3::tma_load_4d(sv + ch * v3::chunk_bytes(KK), &mv, bar, 64 * ch, 0, 0, 0);
  }
  const v3::Frag f(threadIdx.x);
  std::uint32_t pf[KK / 4];
  auto at = [&](int r, int col) {
    return std::uint32_t(pmat[r * KK + col]) | (std::uint32_t(pmat[r * KK + col + 1]) << 16);
  };
#pragma unroll
  for (int kk = 0; kk < KK / 16; ++kk) {
    pf[4 * kk + 0] = at(f.row, 16 * kk + f.col);
    pf[4 * kk + 1] = at(f.row + 8, 16 * kk + f.col);
    pf[4 * kk + 2] = at(f.row, 16 * kk + 8 + f.col);
    pf[4 * kk + 3] = at(f.row + 8, 16 * kk + 8 + f.col);
  }
  v3::mbar_wait(bar, 0);
  float acc[D / 2];
  v3::reg_fence(acc);
  v3::reg_fence(pf);
  v3::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < KK / 16; ++kk)
    v3::wgmma_rs<D, false, 1>(acc, &pf[4 * kk], v3::desc_mnmajor_sw128(sv + kk * 16 * 128, v3::chunk_bytes(KK)), kk > 0);
  v3::wgmma_commit();
  v3::wgmma_wait<0>();
  v3::reg_fence(acc);
#pragma unroll
  for (int i = 0; i < D / 2; ++i) c[(f.row + ((i % 4) >= 2 ? 8 : 0)) * D + 8 * (i / 4) + f.col + (i % 2)] = acc[i];
}

struct UnitResult {
  const char* name;
  double max_abs, rel_l2;
  bool pass;
};

inline UnitResult compare(const char* name, const std::vector<float>& got, const std::vector<double>& ref) {
  double mx = 0, nn = 0, dd = 0;
  bool finite = true;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) finite = false;
    mx = std::max(mx, std::fabs(got[i] - ref[i]));
    nn += (got[i] - ref[i]) * (got[i] - ref[i]);
    dd += ref[i] * ref[i];
  }
  const double rel = std::sqrt(nn / dd);
  return {name, finite ? mx : NAN, finite ? rel : NAN, finite && rel < 1e-5};
}

// C = A B^T: A 64 x D, B `valid` x D (rows valid..NN-1 of the box are past the tensor: zeros).
template <int D, int NN>
UnitResult test_ss(const char* name, int valid, std::uint64_t seed) {
  void *a, *b;
  float* c;
  CHECK(cudaMalloc(&a, 64 * D * 2));
  CHECK(cudaMalloc(&b, std::size_t(valid) * D * 2));
  CHECK(cudaMalloc(&c, 64 * NN * 4));
  v3host::fill_normal(a, 64 * D, false, seed);
  v3host::fill_normal(b, std::size_t(valid) * D, false, seed + 1);
  CHECK(cudaMemset(c, 0xFF, 64 * NN * 4));
  const CUtensorMap ma = v3host::make_map(a, 1, 64, 1, D, 64, false);
  const CUtensorMap mb = v3host::make_map(b, 1, valid, 1, D, NN, false);
  const int smem = v3::tile_bytes(64, D) + v3::tile_bytes(NN, D) + 8 + 1024;
  CHECK(cudaFuncSetAttribute(ss_kernel<D, NN>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  ss_kernel<D, NN><<<1, 128, smem>>>(ma, mb, c);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const auto ha = v3host::download(a, 64 * D, false), hb = v3host::download(b, std::size_t(valid) * D, false);
  std::vector<float> hc(64 * NN);
  CHECK(cudaMemcpy(hc.data(), c, hc.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<double> ref(64 * NN, 0.0);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < valid; ++j) {
      double x = 0;
      for (int e = 0; e < D; ++e) x += double(ha[i * D + e]) * hb[j * D + e];
      ref[i * NN + j] = x;
    }
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  return compare(name, hc, ref);
}

// C = P V: P 64 x KK (row-major in global, into registers), V `valid` x D (zero rows past valid).
template <int D, int KK>
UnitResult test_rs(const char* name, int valid, std::uint64_t seed) {
  void *pm, *v;
  float* c;
  CHECK(cudaMalloc(&pm, 64 * KK * 2));
  CHECK(cudaMalloc(&v, std::size_t(valid) * D * 2));
  CHECK(cudaMalloc(&c, 64 * D * 4));
  v3host::fill_normal(pm, 64 * KK, false, seed);
  v3host::fill_normal(v, std::size_t(valid) * D, false, seed + 1);
  CHECK(cudaMemset(c, 0xFF, 64 * D * 4));
  const CUtensorMap mv = v3host::make_map(v, 1, valid, 1, D, KK, false);
  const int smem = v3::tile_bytes(KK, D) + 8 + 1024;
  CHECK(cudaFuncSetAttribute(rs_kernel<D, KK>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  rs_kernel<D, KK><<<1, 128, smem>>>(static_cast<const std::uint16_t*>(pm), mv, c);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const auto hp = v3host::download(pm, 64 * KK, false), hv = v3host::download(v, std::size_t(valid) * D, false);
  std::vector<float> hc(64 * D);
  CHECK(cudaMemcpy(hc.data(), c, hc.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<double> ref(64 * D, 0.0);
  for (int i = 0; i < 64; ++i)
    for (int e = 0; e < D; ++e) {
      double x = 0;
      for (int j = 0; j < valid; ++j) x += double(hp[i * KK + j]) * hv[j * D + e];
      ref[i * D + e] = x;
    }
  CHECK(cudaFree(pm));
  CHECK(cudaFree(v));
  CHECK(cudaFree(c));
  return compare(name, hc, ref);
}

}  // namespace v3unit
