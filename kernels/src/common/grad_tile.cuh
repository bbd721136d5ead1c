// grad_tile.cuh — one tile (i, j) of the attention backward on the tensor cores: V1's kernel (FA1
// Alg. 4, v1_backward.cu) whole, and the pieces that V2's (FA2 Alg. 2 as released, grad_grid.cuh,
// v2_backward.cu) shares with it: the SRAM tiles, S^T and dP^T, the mask, P^T and dS^T, dQ_i's grid.
//
// In V1's kernel a thread block owns K/V block j. Its warps first split the B_c keys (16 per warp):
// warp w computes the transposed tiles S_ij^T = K_w Q_i^T and dP_ij^T = V_w dO_i^T (keys x B_r, in
// registers), then P^T = exp(scale S^T - L) (FA2 line 11; V1 gives L = m + ln l, so that this is FA1
// line 13's diag(l)^-1 exp(S - m)), dV_w += P^T dO_i (line 12), dS^T = P^T o (dP^T - D) (line 14) and
// dK_w += dS^T Q_i (line 16), the softmax scale applied once to dK_j at its store and to dQ_i's
// contribution (FA1 Alg. 4 lines 20-21 scale the products; FA2's kernels scale dK_j in their
// epilogue and dQ_i in convert_dQ), not to every element of dS: each warp's keys are
// its own, so dK_j and dV_j accumulate in its registers with no communication. dQ_i = dS_ij K_j
// (line 15) sums over the keys, which the warps split: dS^T goes through SRAM, and the warps then
// split B_r x d for dQ_i's contribution (DqGrid), which the caller adds to HBM
// (V2: atomically into the fp32 accumulator; V1: read, add, write at the input type).
#pragma once

#include <cstdint>

#include "common/copy.cuh"
#include "common/warp_tile.cuh"
#include "flashlab/contract/tiling.hpp"
#include "tiles.hpp"

namespace flashlab::gpu {

/// dQ_i's warp grid for a compiled backward kernel K (an Instance, launch.cuh), shared by both warp
/// tilings below: dQ_i = dS_ij K_j, the warps split B_r into kWM row groups of kRQ rows and d into
/// W / kWM column groups of kDQ (FA2's AtomLayoutMdQ: 4 x 2 warps of 32 x 32 at d = 64 on 128 x 128
/// x 8, 2 x 4 at d = 128 on 64 x 128 x 8): a warp reads 32 rows of dS^T and kDQ columns of K_j from
/// SRAM where a warp of 16 rows x d read half the rows of dS and all of K_j, so each fragment of K_j
/// feeds twice the tensor-core instructions. Also the bytes of GradSram.
template <class K>
struct DqGrid : K {
  static constexpr int kThreads = K::W * 32;
  // dQ_i's warp grid: kWM groups of rows (tiles.hpp), W / kWM of d
  static constexpr int kWM = backward_dq_row_groups(TileShape{K::BR, K::BC, K::W}, K::D);
  static constexpr int kRQ = K::BR / kWM;            // rows of Q_i per warp for dQ_i
  static constexpr int kMQ = kRQ / 16;
  static constexpr int kDQ = K::D / (K::W / kWM);    // columns of d per warp for dQ_i
  static constexpr int kDQT = kDQ / 8;
  static_assert(kWM > 0 && kRQ % 16 == 0 && kDQ % 16 == 0 && K::BC % 32 == 0);
  static_assert(K::BR <= kThreads, "one thread per row of Q_i loads L_i and D_i");
  /// Bytes of GradSram (a kernel adds buffers after them: their start is 256-byte aligned).
  static constexpr int kSramBytes = (2 * K::BC + 2 * K::BR) * K::D * int(sizeof(typename K::T)) +
                                    K::BR * K::BC * int(sizeof(typename K::T)) + 2 * K::BR * int(sizeof(float));
  static_assert(kSramBytes % 256 == 0, "buffers after GradSram start on a 256-byte line (SwizzledAt)");
  /// The first row and column of dQ_i that warp w computes.
  static __device__ __forceinline__ int dq_row0(int w) { return (w % kWM) * kRQ; }
  static __device__ __forceinline__ int dq_col0(int w) { return (w / kWM) * kDQ; }
};

/// The warp tiling of V1's backward kernel (v1_backward.cu; V2's is GridShape, grad_grid.cuh).
///
/// Keys: warp w owns keys [16 w, 16 w + 16) of K_j (B_c = 16 W) for S^T, dP^T, dK_j, dV_j. It works
/// through Q_i in chunks of kQC queries (FA2 line 8's tile, B_r, cut along its rows): S^T and dP^T of
/// one chunk live in registers at a time, beside dK_j and dV_j of the warp's keys, so a warp holds
/// 2 x 16 x (kQC + d) / 32 accumulators instead of 2 x 16 x (B_r + d) / 32, and ptxas has registers
/// left to load the next fragments early. Every query is independent once L_i and D_i are known (no
/// row reduction in the backward), and the chunks go in query order, so dK_j and dV_j are summed in
/// the same order as with one chunk. dQ_i on DqGrid.
template <class K, int kChunkMax>
struct GradShape : DqGrid<K> {
  static constexpr int kKeysPerWarp = K::BC / K::W;  // keys of K_j per warp (S^T, dP^T, dK, dV)
  static constexpr int kMK = kKeysPerWarp / 16;      // m16 tiles of keys per warp
  static constexpr int kDT = K::D / 8;               // n8 tiles of d (a warp's dK_j, dV_j columns: all of d)
  // queries per chunk: kChunkMax (V1's kernel, which holds more state, 16) up to d = 64; at d = 128,
  // 32 where a warp's dQ block is at most 32 columns wide, else 16: the widest chunk that ptxas fits
  // in 255 registers without spilling (nvcc 13.0, sm_90); each chunk reads K_w and V_w from SRAM again
  static constexpr int kQC0 = K::D <= 64 ? kChunkMax : GradShape::kDQ <= 32 ? 32 : 16;
  static constexpr int kQC = K::BR < kQC0 ? K::BR : kQC0;
  static constexpr int kNQ = kQC / 8;                // n8 tiles of the queries of one chunk
  static_assert(kKeysPerWarp % 16 == 0 && K::BR % kQC == 0);
  static constexpr int kSmemBytes = GradShape::kSramBytes;
};

/// SRAM of a backward thread block: K_j, V_j (B_c, d); Q_i, dO_i (B_r, d); dS_ij^T (B_c, B_r);
/// per row of Q_i, L_i log2(e) (the exponent shift) and D_i (fp32).
template <class T>
struct GradSram {
  T* K;
  T* V;
  T* Q;
  T* dO;
  T* dS;
  float* shift;
  float* D;
};

/// The tiles carved from the kernel's dynamic shared memory `smem`, which must start at a multiple
/// of 256 bytes in the shared window (the fragment addresses' XOR, SwizzledAt; traps otherwise).
template <class Sh>
__device__ __forceinline__ GradSram<typename Sh::T> grad_sram(unsigned char* smem) {
  using T = typename Sh::T;
  if (smem_addr(smem) % 256 != 0) __trap();
  T* base = reinterpret_cast<T*>(smem);
  T* dS = base + (2 * Sh::BC + 2 * Sh::BR) * Sh::D;
  float* f = reinterpret_cast<float*>(dS + Sh::BR * Sh::BC);
  return {base, base + Sh::BC * Sh::D, base + 2 * Sh::BC * Sh::D, base + (2 * Sh::BC + Sh::BR) * Sh::D, dS, f,
          f + Sh::BR};
}

/// dK_j and dV_j of the warp's keys, in registers (C-fragment layout).
template <class Sh>
struct GradAcc {
  float dk[Sh::kMK][Sh::kDT][4];
  float dv[Sh::kMK][Sh::kDT][4];
  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int mt = 0; mt < Sh::kMK; ++mt)
#pragma unroll
      for (int dt = 0; dt < Sh::kDT; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) dk[mt][dt][e] = dv[mt][dt][e] = 0.f;
  }
};

/// Where tile (i, j) lies: its first query row and key, rows(i), cols(j), whether a mask or a ragged
/// edge touches it.
struct GradTile {
  std::int64_t row0, col0;
  int rows, cols;
  bool masked;
};

/// Two independent products on two n-tiles each, issued alternately so that each tensor-core
/// instruction has the other product's in flight beside it: x[0..1] += a b (b's two n-tiles) and
/// y[0..1] += c e.
template <class T>
__device__ __forceinline__ void mma_interleaved(float (&x0)[4], float (&x1)[4], const std::uint32_t (&a)[4],
                                                const std::uint32_t (&b)[4], float (&y0)[4], float (&y1)[4],
                                                const std::uint32_t (&c)[4], const std::uint32_t (&e)[4]) {
  mma_16816<T>(x0, a, b[0], b[1]);
  mma_16816<T>(y0, c, e[0], e[1]);
  mma_16816<T>(x1, a, b[2], b[3]);
  mma_16816<T>(y1, c, e[2], e[3]);
}

/// S^T = K_w Q_c^T and dP^T = V_w dO_c^T (lines 10 and 13) for the warp's keys and a chunk of
/// queries, the two products interleaved step for step: they share no operand, so each step of d
/// has 2 kNQ independent accumulators in flight instead of kNQ (each accumulator still sums over d
/// in the same order: the same values as two separate scores() calls). k_at: K_w's A fragments
/// (rows lane % 16, chunk lane / 16), V_w kv_bytes after it; q_at: Q_c^T's B fragments (rows
/// lane % 8 + (lane / 16) 8, chunk (lane / 8) % 2), dO_c q_do_bytes after it.
template <class T, int kMK, int kNQ, int D>
__device__ __forceinline__ void scores_and_dp(float (&s)[kMK][kNQ][4], float (&dp)[kMK][kNQ][4], SwizzledAt<D> k_at,
                                              std::uint32_t kv_bytes, SwizzledAt<D> q_at, std::uint32_t q_do_bytes) {
  static_assert(kNQ % 2 == 0 && D % 16 == 0);
#pragma unroll
  for (int mt = 0; mt < kMK; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNQ; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[mt][nt][e] = dp[mt][nt][e] = 0.f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t ak[kMK][4], av[kMK][4];  // K_w, V_w: 16 keys x 16 of d per m-tile
#pragma unroll
    for (int mt = 0; mt < kMK; ++mt) {
      ldmatrix_x4(ak[mt], k_at(mt * 16, kk * 16));
      ldmatrix_x4(av[mt], k_at(mt * 16, kk * 16) + kv_bytes);
    }
#pragma unroll
    for (int np = 0; np < kNQ / 2; ++np) {
      std::uint32_t bq[4], bo[4];  // Q_c^T, dO_c^T: 16 of d x 16 queries, two n-tiles each
      ldmatrix_x4(bq, q_at(np * 16, kk * 16));
      ldmatrix_x4(bo, q_at(np * 16, kk * 16) + q_do_bytes);
#pragma unroll
      for (int mt = 0; mt < kMK; ++mt)
        mma_interleaved<T>(s[mt][2 * np], s[mt][2 * np + 1], ak[mt], bq, dp[mt][2 * np], dp[mt][2 * np + 1], av[mt], bo);
    }
  }
}

/// Sets to -inf the elements of the warp's S^T (keys x queries of one chunk) that the mask or a ragged
/// edge hides: key c >= N_k, query r >= N_q, or c - r outside [band.lo, band.hi]. key0 / query0: the
/// global key of the warp's first row and the query of the chunk's first column. As mask_scores
/// (warp_tile.cuh) for S: element (mt, nt, h, e) of thread (g, t) is key key0 + g + mt*16 + 8h and
/// query query0 + 2t + nt*8 + e, so c - r = base + k with base the same for all of the thread's
/// elements and k a compile-time constant; the bounds move to the thread's origin once, in 32 bits.
template <int kMK, int kNQ>
__device__ __forceinline__ void mask_scores_t(float (&s)[kMK][kNQ][4], const Band& band, std::int64_t key0,
                                              std::int64_t query0, std::int64_t n_q, std::int64_t n_k, int lane) {
  const int g = lane / 4, t = lane % 4;
  const std::int64_t c0 = key0 + g, r0 = query0 + 2 * t, base = c0 - r0;
  const auto clamp32 = [](std::int64_t x) {  // |k| < 2^16, so any bound beyond 2^30 acts alike
    return int(x < -(std::int64_t(1) << 30) ? -(std::int64_t(1) << 30) : x > (std::int64_t(1) << 30) ? (std::int64_t(1) << 30) : x);
  };
  const int lo = clamp32(band.lo - base), hi = clamp32(band.hi - base), keys = clamp32(n_k - c0),
            queries = clamp32(n_q - r0);
#pragma unroll
  for (int mt = 0; mt < kMK; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNQ; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int key = mt * 16 + 8 * h, query = nt * 8 + e, k = key - query;
          if (key >= keys || query >= queries || k < lo || k > hi) s[mt][nt][2 * h + e] = -INFINITY;
        }
}

/// dV_w += P^T dO_c and dK_w += dS^T Q_c (lines 12 and 16), 16 queries of the chunk at a time, the
/// two products interleaved (independent accumulators; each sums over the queries in order).
/// qt_at: Q_c's transposed B fragments (rows lane % 8 + ((lane / 8) % 2) 8, chunk lane / 16), dO_c
/// q_do_bytes after it.
template <class T, int kMK, int kNQ, int D>
__device__ __forceinline__ void grad_v_and_k(float (&dv)[kMK][D / 8][4], float (&dk)[kMK][D / 8][4],
                                             const float (&p)[kMK][kNQ][4], const float (&ds)[kMK][kNQ][4],
                                             SwizzledAt<D> qt_at, std::uint32_t q_do_bytes) {
#pragma unroll
  for (int kc = 0; kc < kNQ / 2; ++kc) {
    std::uint32_t pa[kMK][4], sa[kMK][4];
    p_fragment<T>(pa, p, kc);   // P^T cast to the input type, as FA2 casts P
    p_fragment<T>(sa, ds, kc);  // dS^T likewise
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      std::uint32_t bo[4], bq[4];  // dO_c, Q_c: 16 queries x 16 of d, transposed into two n-tiles
      ldmatrix_x4_trans(bo, qt_at(kc * 16, dp * 16) + q_do_bytes);
      ldmatrix_x4_trans(bq, qt_at(kc * 16, dp * 16));
#pragma unroll
      for (int mt = 0; mt < kMK; ++mt)
        mma_interleaved<T>(dv[mt][2 * dp], dv[mt][2 * dp + 1], pa[mt], bo, dk[mt][2 * dp], dk[mt][2 * dp + 1], sa[mt], bq);
    }
  }
}

/// Lines 11 and 14 on the warp's S^T and dP^T (keys x queries q0 + (0..kNQ 8) of Q_i, in place):
/// P^T = exp(scale S^T - L), 0 where the mask or a ragged edge hides (row, key) (S^T = -inf there:
/// 2^-inf = 0; L_i log2 e is +inf on a row with no key, never -inf); dS^T = P^T o (dP^T - D),
/// unscaled (the scale goes to dK_j and dQ_i, see the top). shift, D: SRAM rows of L_i log2 e and D_i.
template <int kMK, int kNQ>
__device__ __forceinline__ void probs_and_grad_s(float (&p)[kMK][kNQ][4], float (&ds)[kMK][kNQ][4],
                                                 const float* shift, const float* d_sum, int q0, float scale_log2,
                                                 int lane) {
  for_each_pair<kMK, kNQ>(lane, [&](int mt, int nt, int h, int, int col) {
    const float2 sh = *reinterpret_cast<const float2*>(shift + q0 + col);
    const float2 dd = *reinterpret_cast<const float2*>(d_sum + q0 + col);
    float* x = p[mt][nt] + 2 * h;
    float* y = ds[mt][nt] + 2 * h;
    x[0] = exp2_ftz(fmaf(x[0], scale_log2, -sh.x));
    x[1] = exp2_ftz(fmaf(x[1], scale_log2, -sh.y));
    y[0] = x[0] * (y[0] - dd.x);
    y[1] = x[1] * (y[1] - dd.y);
  });
}

/// Stores the warp's keys x queries tile x (P^T or dS^T) into a B_c x B_r SRAM tile at the input
/// type, as the warp holds it (two queries per 32-bit store): at(r, c) is thread (g, t)'s place for
/// key row g + r and query 2t + c (a SwizzledAt at the warp's first key, lane / 4, 0, 2 (lane % 4)).
template <class T, int kMK, int kNQ, int kBR>
__device__ __forceinline__ void store_transposed(const SwizzledAt<kBR>& at, const float (&x)[kMK][kNQ][4], int q0,
                                                 int lane) {
  for_each_pair<kMK, kNQ>(lane, [&](int mt, int nt, int h, int, int) {
    st_shared_b32(at(mt * 16 + 8 * h, q0 + nt * 8), ElemTraits<T>::pack(x[mt][nt][2 * h], x[mt][nt][2 * h + 1]));
  });
}

/// Lines 10-14 and 16 for the warp's keys, then dS_ij into SRAM: after it (and a barrier) the
/// warps compute dQ_i's contribution with grad_dq. The caller has Q_i, dO_i, shift, D in SRAM.
/// Q_i is taken kQC queries at a time (GradShape).
template <class Sh>
__device__ __forceinline__ void grad_keys(const GradSram<typename Sh::T>& sram, GradAcc<Sh>& acc, const GradTile& t,
                                          const Band& band, std::int64_t n_q, std::int64_t n_k, float scale,
                                          int lane, int key0) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, kMK = Sh::kMK, kNQ = Sh::kNQ, kQC = Sh::kQC;
  constexpr float kLog2e = 1.4426950408889634f;
  const float scale_log2 = scale * kLog2e;
  // the lanes' fragment addresses (SwizzledAt): V_j, dO_i sit a constant number of bytes after K_j, Q_i
  const SwizzledAt<D> k_at(sram.K + key0 * D, lane % 16, lane / 16);
  const SwizzledAt<D> q_at(sram.Q, lane % 8 + (lane / 16) * 8, (lane / 8) % 2);
  const SwizzledAt<D> qt_at(sram.Q, lane % 8 + ((lane / 8) % 2) * 8, lane / 16);
  const auto kv_bytes = std::uint32_t(smem_addr(sram.V) - smem_addr(sram.K));
  const auto q_do_bytes = std::uint32_t(smem_addr(sram.dO) - smem_addr(sram.Q));
  const SwizzledAt<Sh::BR> ds_at(sram.dS + key0 * Sh::BR, lane / 4, 0, 2 * (lane % 4));
#pragma unroll 1
  for (int q0 = 0; q0 < Sh::BR; q0 += kQC) {
    float p[kMK][kNQ][4], ds[kMK][kNQ][4];
    // S^T = K_w Q_i^T (line 10), dP^T = V_w dO_i^T (line 13)
    scores_and_dp<T, kMK, kNQ, D>(p, ds, k_at, kv_bytes, q_at.down(q0), q_do_bytes);
    if (t.masked) mask_scores_t<kMK, kNQ>(p, band, t.col0 + key0, t.row0 + q0, n_q, n_k, lane);
    probs_and_grad_s<kMK, kNQ>(p, ds, sram.shift, sram.D, q0, scale_log2, lane);  // lines 11, 14
    store_transposed<T, kMK, kNQ, Sh::BR>(ds_at, ds, q0, lane);  // dS_ij^T for grad_dq
    // line 12: dV_w += P^T dO_i; line 16: dK_w += dS^T Q_i
    grad_v_and_k<T, kMK, kNQ, D>(acc.dv, acc.dk, p, ds, qt_at.down(q0), q_do_bytes);
  }
}

/// Line 15's product for the warp's block of dQ_i: dq = dS_ij[row0 + (0..kRQ), :] K_j[:, col0 + (0..kDQ)]
/// (kRQ, kDQ), fp32; row0 = Sh::dq_row0(warp), col0 = Sh::dq_col0(warp). Every warp must have stored
/// its part of dS_ij (grad_keys) and passed a barrier.
template <class Sh>
__device__ __forceinline__ void grad_dq(float (&dq)[Sh::kMQ][Sh::kDQT][4], const GradSram<typename Sh::T>& sram,
                                        int lane, int row0, int col0) {
  using T = typename Sh::T;
#pragma unroll
  for (int mt = 0; mt < Sh::kMQ; ++mt)
#pragma unroll
    for (int dt = 0; dt < Sh::kDQT; ++dt) dq[mt][dt][0] = dq[mt][dt][1] = dq[mt][dt][2] = dq[mt][dt][3] = 0.f;
  // dS^T read transposed (ldmatrix .trans turns each 8 x 8 block of key rows into the A layout;
  // matrix q = lane / 8 of the x4 is keys +8 for q >= 2, rows of dQ_i +8 for q odd) and K_j's
  // transposed B fragments, each lane at a SwizzledAt
  const int q = lane / 8;
  const SwizzledAt<Sh::BR> ds_at(sram.dS, (q / 2) * 8 + lane % 8, q % 2);
  const SwizzledAt<Sh::D> k_at(sram.K, lane % 8 + (q % 2) * 8, lane / 16);
#pragma unroll
  for (int kc = 0; kc < Sh::BC / 16; ++kc) {
    std::uint32_t pa[Sh::kMQ][4];
#pragma unroll
    for (int mt = 0; mt < Sh::kMQ; ++mt) ldmatrix_x4_trans(pa[mt], ds_at(kc * 16, row0 + mt * 16));
#pragma unroll
    for (int dp = 0; dp < Sh::kDQ / 16; ++dp) {
      std::uint32_t b[4];  // K_j, 16 keys x 16 of d, transposed into two n-tiles
      ldmatrix_x4_trans(b, k_at(kc * 16, col0 + dp * 16));
#pragma unroll
      for (int mt = 0; mt < Sh::kMQ; ++mt) {
        mma_16816<T>(dq[mt][2 * dp], pa[mt], b[0], b[1]);
        mma_16816<T>(dq[mt][2 * dp + 1], pa[mt], b[2], b[3]);
      }
    }
  }
}

/// Writes dK_j = scale acc.dk (the softmax scale that dS left out, grad_keys) then dV_j of the
/// thread block to HBM through SRAM (`stage`, B_c x d): whole 16-byte chunks of the cols(j) valid rows.
/// The warp's accumulators are keys key0 + (0..16 kMK), columns col0 + (0..8 kDT) of d.
template <class Sh>
__device__ __forceinline__ void store_grads(typename Sh::T* stage, const GradAcc<Sh>& acc, typename Sh::T* dk,
                                            typename Sh::T* dv, int cols, int lane, int key0, float scale,
                                            int col0 = 0) {
  using T = typename Sh::T;
  float one[Sh::kMK][2], dk_scale[Sh::kMK][2];
#pragma unroll
  for (int mt = 0; mt < Sh::kMK; ++mt) {
    one[mt][0] = one[mt][1] = 1.f;
    dk_scale[mt][0] = dk_scale[mt][1] = scale;
  }
  __syncthreads();  // every warp is done with the SRAM that `stage` reuses
  store_fragments<T, Sh::kMK, Sh::kDT, Sh::D>(stage + key0 * Sh::D, acc.dk, dk_scale, lane, col0);
  __syncthreads();
  store_tile<T, Sh::BC, Sh::D, Sh::kThreads>(dk, Sh::D, stage, cols, Sh::D);
  __syncthreads();
  store_fragments<T, Sh::kMK, Sh::kDT, Sh::D>(stage + key0 * Sh::D, acc.dv, one, lane, col0);
  __syncthreads();
  store_tile<T, Sh::BC, Sh::D, Sh::kThreads>(dv, Sh::D, stage, cols, Sh::D);
}

}  // namespace flashlab::gpu
