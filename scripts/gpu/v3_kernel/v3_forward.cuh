// v3_forward.cuh — V3's forward (FlashAttention-3's Hopper schedule, Shah et al. 2024, Algorithms 1-2)
// for sm_90a: O = softmax(Q K^T * scale [+ causal mask]) V and L = logsumexp of each row.
//
// Layout: Q, K, V, O are [B, N, H, D] row-major (PyTorch SDPA's [B, H, N, D] inputs after
// .transpose(1, 2)), fp16 or bf16; L is [B, H, N] fp32 (natural log, of the scaled scores). Causal
// is top-left aligned with N_q = N_k: row i sees columns 0..i. N is any length >= 1 (ragged tiles:
// the copy engine fills rows past N with zeros; columns past N are masked; rows past N not stored).
//
// One thread block per tile of B_r = 64 x kConsumerWgs query rows of one (batch, head) (scheduler
// "grid"), or #SM blocks walking the tiles: "static", tile t = blockIdx.x + k * gridDim.x; "dynamic"
// (FA3's choice when causal), the producer takes the next tile from a global counter (atomicAdd) and
// hands it to the consumers through two slots in shared memory used in turn, and one named barrier
// that the producer's warp 0 and all consumers sync on once per tile: the producer writes tile k + 1
// into the other slot after the sync of tile k and syncs for tile k + 1 once it issued that tile's
// first kStages K/V loads (the next ones wait for the consumers anyway), so it never waits for work
// it could do. (An mbarrier pair, and then bar.arrive / bar.sync as FA3's hopper/tile_scheduler.hpp,
// each made compute-sanitizer's racecheck report the slot's read against its write: 2 and 1 hazards
// per run on the H200.) The block that finishes last sets the counter back to 0 for the next launch.
//   producer (warp specialization on): warpgroup 0 gives up registers (setmaxnreg.dec); its thread 0
//     loads Q once per tile and K_j, V_j into a kStages-deep ring by the bulk tensor copy (TMA),
//     each completing an mbarrier (full); it reuses a stage once the consumers arrive on its empty
//     mbarrier. With warp specialization off, consumer thread 0 issues the same loads in line.
//   consumers: warpgroup w (64 rows) computes S = Q K_j^T by wgmma SS (fp32), the online softmax in
//     registers (row max and sum across the 4 threads of a row by shuffles, exp2 with log2(e)*scale
//     folded in), converts P to 16 bits in registers and adds P V_j by wgmma RS (V read N-major:
//     the transpose bit). Key blocks run from the last to the first, so the masked blocks (the
//     diagonal ones when causal, the ragged last) come first; blocks above the diagonal are skipped.
//   pingpong: warpgroups take turns issuing their GEMMs (named barriers), so one's softmax runs under
//     the other's GEMMs. intra_overlap: S_{j} = Q K_j^T is issued together with O += P_{j+1} V_{j+1}
//     and the softmax of S_j runs while the latter is in flight (FA3 Algorithm 2).
// Epilogue: O / l stored from registers (rows < N) in whole 32-byte sectors (a 4 x 4 exchange within
// each quad of lanes, then one 16-byte store per lane), L = m * scale + ln(l).
// Instrumented build: v3_forward_traced_kernel<C> runs the same body with a recorder (record.cuh) that
// writes the simulator's V3 events and per-warpgroup timestamps; v3_forward_kernel<C> runs it with
// Rec<false>, which compiles to nothing (its machine code is that of the body before the recorder).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "layout.cuh"
#include "ptx.cuh"
#include "record.cuh"
#include "wgmma.cuh"

namespace v3 {

// The switches of issue 27 item 1, as compile-time choices, and the tile sizes.
template <bool kBf16_, int kD_, int kBr_, int kBc_, int kStages_, bool kCausal_, bool kWarpSpec_, bool kPingpong_,
          bool kIntraOverlap_, int kSched_>
struct Cfg {
  static constexpr bool kBf16 = kBf16_, kCausal = kCausal_, kWarpSpec = kWarpSpec_, kPingpong = kPingpong_,
                        kIntraOverlap = kIntraOverlap_;
  static constexpr int kSched = kSched_;  // 0 grid, 1 static persistent, 2 dynamic persistent
  static constexpr bool kPersistent = kSched != 0;
  static constexpr int kD = kD_, kBr = kBr_, kBc = kBc_, kStages = kStages_;
  static constexpr int kConsumerWgs = kBr / 64;
  static constexpr int kThreads = 128 * (kConsumerWgs + (kWarpSpec ? 1 : 0));
  static constexpr int kQBytes = tile_bytes(kBr, kD), kKvBytes = tile_bytes(kBc, kD);
  // shared memory: Q, K ring, V ring (each 1024-aligned), then the mbarriers
  static constexpr int kOffK = kQBytes, kOffV = kOffK + kStages * kKvBytes, kOffBar = kOffV + kStages * kKvBytes;
  // q_full, q_empty, k_full[], k_empty[], v_full[], v_empty[]; then the tile slots (scheduler "dynamic")
  static constexpr int kNumBars = 2 + 4 * kStages;
  static constexpr int kOffSlot = kOffBar + 8 * kNumBars;
  static constexpr int kSmemBytes = kOffSlot + 8 + 1024;  // + 1024: the alignment of the base
  // the dynamic scheduler's hand-over: a named barrier (PTX ISA "bar, barrier"; 0 is __syncthreads,
  // 1..kConsumerWgs the ping-pong's) that the producer's warp 0 and every consumer thread sync on
  // once per tile, each from its own code (named_sync_any), and two tile slots used in turn
  // (kOffSlot, 8 bytes)
  static constexpr int kBarSched = 4;
  static constexpr int kSchedThreads = 32 + 128 * kConsumerWgs;
  // registers per thread after setmaxnreg. The block holds kEntryRegs x kThreads registers from its
  // launch (__launch_bounds__(kThreads, 1): 65,536 / kThreads, down to a multiple of 8) and setmaxnreg
  // only moves them between warpgroups: setmaxnreg.inc waits until the others' .dec freed enough, so
  // asking for more than the block holds hangs (seen on the H200: 32 + 2 x 240 > 3 x 168). FA3's
  // choice: 24 / 240 with 2 consumer warpgroups, 32 / 160 with 3; with the dynamic scheduler the
  // producer needs more than 24 (ptxas spilled), so 40 / 232 there.
  static constexpr int kEntryRegs = (65536 / kThreads) / 8 * 8 > 255 ? 255 : (65536 / kThreads) / 8 * 8;
  static constexpr int kProducerRegs = kConsumerWgs == 3 ? 32 : kSched == 2 ? 40 : 24;
  static constexpr int kConsumerRegs = kConsumerWgs == 3 ? 160 : kSched == 2 ? 232 : 240;
  static_assert(!kWarpSpec || kProducerRegs + kConsumerWgs * kConsumerRegs <= (kConsumerWgs + 1) * kEntryRegs,
                "setmaxnreg: more registers than the block holds at launch (setmaxnreg.inc would wait forever)");
  static_assert(kD == 64 || kD == 128, "D: 64 or 128");
  static_assert(kBr % 64 == 0 && kConsumerWgs >= 1 && kConsumerWgs <= 3, "B_r: 64, 128 or 192");
  static_assert(kBc % 16 == 0 && kBc <= 256, "B_c: a multiple of 16, at most 256");
  static_assert(kStages >= 1 && kStages <= 3, "stages: 1 to 3");
  static_assert(!kPingpong || kConsumerWgs >= 2, "pingpong needs 2 or more consumer warpgroups");
  static_assert(kSched >= 0 && kSched <= 2, "scheduler: 0 grid, 1 static, 2 dynamic");
  static_assert(kWarpSpec || (!kPingpong && !kPersistent),
                "warp specialization off: only with pingpong off and the grid scheduler");
  static_assert(kSmemBytes <= 232448, "shared memory over the 227 KiB a block may have");
};

struct Params {
  CUtensorMap tm_q, tm_k, tm_v;  // 4-d maps (D, H, N, B), box (64, 1, rows, 1), 128B swizzle
  void* o;                       // [B, N, H, D]
  float* lse;                    // [B, H, N]
  int b, h, n;
  int num_m_blocks, num_tiles;
  int* tile_counter;  // [2]: next tile - gridDim.x, blocks finished (scheduler "dynamic"; zero at launch)
  float scale, scale_log2;  // 1/sqrt(D) by default; scale * log2(e)
};

// Tile t -> (m block, batch, head): a head's m blocks are consecutive (its K/V stay in L2 while the
// blocks in flight share them); causal walks each head's m blocks from the last (longest) to the first.
template <class C>
__device__ __forceinline__ void decode_tile(const Params& p, int t, int& mb, int& bi, int& hi) {
  const int bh = t / p.num_m_blocks, r = t % p.num_m_blocks;
  mb = C::kCausal ? p.num_m_blocks - 1 - r : r;
  bi = bh / p.h;
  hi = bh % p.h;
}

// Key blocks of m block mb: all ceil(N / B_c), or, when causal, those holding a column <= the block's
// last row.
template <class C>
__device__ __forceinline__ int num_n_blocks(const Params& p, int mb) {
  int end = p.n;
  if constexpr (C::kCausal) end = min(end, (mb + 1) * C::kBr);
  return (end + C::kBc - 1) / C::kBc;
}

// The loads, shared by the producer warp and the in-line producer (warp specialization off).
template <class C>
struct Loader {
  const Params& p;
  std::uint32_t smem, bars;
  __device__ std::uint32_t bar(int i) const { return bars + 8 * i; }
  __device__ std::uint32_t q_full() const { return bar(0); }
  __device__ std::uint32_t q_empty() const { return bar(1); }
  __device__ std::uint32_t k_full(int s) const { return bar(2 + s); }
  __device__ std::uint32_t k_empty(int s) const { return bar(2 + C::kStages + s); }
  __device__ std::uint32_t v_full(int s) const { return bar(2 + 2 * C::kStages + s); }
  __device__ std::uint32_t v_empty(int s) const { return bar(2 + 3 * C::kStages + s); }

  // rows(i), cols(j) of the simulator's tiling (docs/events.md "Block level")
  __device__ int rows_of(int i) const { return min(C::kBr, p.n - i * C::kBr); }
  __device__ int cols_of(int j) const { return min(C::kBc, p.n - j * C::kBc); }

  // Q_i of the tile into its buffer (once the consumers released the last tile's). rec: the
  // instrumented build's recorder (record.cuh), `step` the tile's first step (events: load Q,
  // arrive Q stage_full; the wait for Q's empty barrier is no event of the simulator's stream).
  template <class R>
  __device__ void load_q(int tile_iter, int mb, int bi, int hi, R& rec, std::uint32_t step) const {
    std::uint64_t t0 = rec.now();
    mbar_wait(q_empty(), (tile_iter & 1) ^ 1);
    rec.stamp(What::wait_q_empty, t0, step, mb, -1);
    t0 = rec.now();
    mbar_arrive_expect_tx(q_full(), C::kQBytes);
#pragma unroll
    for (int c = 0; c < C::kD / 64; ++c)
      tma_load_4d(smem + c * chunk_bytes(C::kBr), &p.tm_q, q_full(), 64 * c, hi, mb * C::kBr, bi);
    rec.stamp(What::load_q, t0, step, mb, -1);
    V3_EV(rec, step, flashlab::Op::load, flashlab::Tensor::Q, flashlab::Eq::none, mb, -1, rows_of(mb), C::kD,
          std::uint64_t(rows_of(mb)) * C::kD * 2, rec.agent);
    V3_EV(rec, step, flashlab::Op::arrive, flashlab::Tensor::Q, flashlab::Eq::stage_full, mb, -1, 0, tile_iter & 1, 0,
          rec.agent);
  }
  // K_j (v = false) or V_j (v = true) into stage it % kStages, once the consumers released it.
  // Events (tile (i, j), step `step`): wait stage_empty (stage, the other phase), load, arrive
  // stage_full (the arrive.expect_tx comes before the copies it counts; the barrier completes when
  // their bytes land, so the event follows the load as in the simulator's stream).
  template <class R>
  __device__ void load_kv(bool v, int it, int j, int bi, int hi, R& rec, std::uint32_t step, int i) const {
    const int s = it % C::kStages, ph = (it / C::kStages) & 1;
    const std::uint32_t full = v ? v_full(s) : k_full(s);
    std::uint64_t t0 = rec.now();
    mbar_wait(v ? v_empty(s) : k_empty(s), ph ^ 1);
    rec.stamp(v ? What::wait_v_empty : What::wait_k_empty, t0, step, i, j);
    t0 = rec.now();
    mbar_arrive_expect_tx(full, C::kKvBytes);
    const std::uint32_t dst = smem + (v ? C::kOffV : C::kOffK) + s * C::kKvBytes;
#pragma unroll
    for (int c = 0; c < C::kD / 64; ++c)
      tma_load_4d(dst + c * chunk_bytes(C::kBc), v ? &p.tm_v : &p.tm_k, full, 64 * c, hi, j * C::kBc, bi);
    rec.stamp(v ? What::load_v : What::load_k, t0, step, i, j);
#define V3_KV (v ? flashlab::Tensor::V : flashlab::Tensor::K)
    V3_EV(rec, step, flashlab::Op::wait, V3_KV, flashlab::Eq::stage_empty, i, j, s, ph ^ 1, 0, rec.agent);
    V3_EV(rec, step, flashlab::Op::load, V3_KV, flashlab::Eq::none, i, j, cols_of(j), C::kD,
          std::uint64_t(cols_of(j)) * C::kD * 2, rec.agent);
    V3_EV(rec, step, flashlab::Op::arrive, V3_KV, flashlab::Eq::stage_full, i, j, s, ph, 0, rec.agent);
#undef V3_KV
  }
};

template <bool kBf16>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  if constexpr (kBf16) {
    __nv_bfloat162 x = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&x);
  } else {
    __half2 x = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&x);
  }
}

// The consumer warpgroup's state for one tile: O accumulators, row max m and partial row sum l of
// its two rows (row and row + 8 of Frag).
template <class C>
struct Consumer {
  static constexpr int kSRegs = C::kBc / 2, kPRegs = C::kBc / 4, kORegs = C::kD / 2;
  const Params& p;
  const Loader<C>& ld;
  int wg, tid;  // consumer warpgroup 0..kConsumerWgs-1, thread within it
  Frag f;
  float o[kORegs];
  std::uint32_t pf[kPRegs];  // P, 16-bit pairs, the A fragments of the P V GEMM
  float m[2], l[2];

  __device__ Consumer(const Params& p_, const Loader<C>& ld_, int wg_, int tid_)
      : p(p_), ld(ld_), wg(wg_), tid(tid_), f(tid_) {}

  // one thread per warp signals a release (the barriers count 4 per consumer warpgroup)
  __device__ void release(std::uint32_t bar) const {
    __syncwarp();
    if (tid % 32 == 0) mbar_arrive(bar);
  }
  __device__ void pp_sync() const {
    if constexpr (C::kPingpong) named_sync(1 + wg, 256);
  }
  __device__ void pp_arrive() const {
    if constexpr (C::kPingpong) named_arrive(1 + (wg + 1) % C::kConsumerWgs, 256);
  }

  __device__ void issue_s(float (&s)[kSRegs], int stage) const {
    const std::uint32_t q = ld.smem + wg * 64 * kRowBytes;
    const std::uint32_t k = ld.smem + C::kOffK + stage * C::kKvBytes;
    reg_fence(s);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < C::kD / 16; ++kk) {
      const int c = kk / 4, off = (kk % 4) * 32;
      wgmma_ss<C::kBc, C::kBf16, 0, 0>(s, desc_kmajor_sw128(q + c * chunk_bytes(C::kBr) + off),
                                       desc_kmajor_sw128(k + c * chunk_bytes(C::kBc) + off), kk > 0);
    }
    wgmma_commit();
  }
  __device__ void issue_pv(int stage) {
    const std::uint32_t v = ld.smem + C::kOffV + stage * C::kKvBytes;
    reg_fence(o);
    reg_fence(pf);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < C::kBc / 16; ++kk)
      wgmma_rs<C::kD, C::kBf16, 1>(o, &pf[4 * kk], desc_mnmajor_sw128(v + kk * 16 * kRowBytes, chunk_bytes(C::kBc)),
                                   1);
    wgmma_commit();
  }

  // Mask S of key block j where needed (columns >= N; causal: columns > row), then the online
  // softmax: new row max, P = exp2(S * scale_log2 - m * scale_log2) left in s, l and O rescaled by
  // the correction (O only when rescale_o; with intra_overlap the caller rescales O later).
  __device__ void softmax(float (&s)[kSRegs], int j, int row0, float (&corr)[2]) {
    const int col0 = j * C::kBc;
    const bool need_mask = col0 + C::kBc > p.n || (C::kCausal && col0 + C::kBc - 1 > row0 - f.row);
    if (need_mask) {
#pragma unroll
      for (int i = 0; i < kSRegs; ++i) {
        const int col = col0 + 8 * (i / 4) + f.col + (i % 2);
        const int row = row0 + ((i % 4) >= 2 ? 8 : 0);
        if (col >= p.n || (C::kCausal && col > row)) s[i] = -INFINITY;
      }
    }
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int i = 0; i < kSRegs; ++i) mx[(i % 4) / 2] = fmaxf(mx[(i % 4) / 2], s[i]);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
    }
    float neg[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float use = mx[r] == -INFINITY ? 0.f : mx[r];  // a row fully masked so far: keep P = 0
      corr[r] = exp2_approx((m[r] - use) * p.scale_log2);
      neg[r] = -use * p.scale_log2;
      m[r] = mx[r];
    }
    float sum[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < kSRegs; ++i) {
      const int r = (i % 4) / 2;
      s[i] = exp2_approx(fmaf(s[i], p.scale_log2, neg[r]));
      sum[r] += s[i];
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) l[r] = l[r] * corr[r] + sum[r];
  }
  __device__ void rescale_o(const float (&corr)[2]) {
#pragma unroll
    for (int i = 0; i < kORegs; ++i) o[i] *= corr[(i % 4) / 2];
  }
  __device__ void convert_p(const float (&s)[kSRegs]) {
#pragma unroll
    for (int i = 0; i < kPRegs; ++i) pf[i] = pack2<C::kBf16>(s[2 * i], s[2 * i + 1]);
  }

  // O / l to global (rows < N), L = m * scale + ln(l). A thread holds 2 columns of each 8-column
  // block of its rows (Frag); the 4 lanes of a quad hold one row. Stored as they lie, each st.global
  // would write 4 bytes per lane, 16 contiguous bytes per row, and every 32-byte sector in two halves.
  // So each group of 4 blocks (32 columns) is transposed within the quad (4 x 4 words of 2 packed
  // elements, by shuffles): lane c then holds the 8 columns of block 4g + c and stores them with one
  // 16-byte st.global, and a warp's store covers 64 contiguous bytes (two whole sectors) of each of
  // its 8 rows. All lanes shuffle (rows >= N too); only rows < N store.
  // a[i], i in 0..3 known only at run time, by selects (no local memory)
  __device__ static std::uint32_t pick4(const std::uint32_t (&a)[4], int i) {
    const std::uint32_t lo = (i & 1) ? a[1] : a[0], hi = (i & 1) ? a[3] : a[2];
    return (i & 2) ? hi : lo;
  }
  __device__ void epilogue(int mb, int bi, int hi) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    }
    const int row0 = mb * C::kBr + wg * 64 + f.row;
    const int q = tid % 4;  // lane within the quad
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = row0 + 8 * r;
      const bool stored = row < p.n;
      const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
      uint4* out = reinterpret_cast<uint4*>(static_cast<char*>(p.o) +
                                            ((std::size_t(bi) * p.n + (stored ? row : 0)) * p.h + hi) * C::kD * 2);
#pragma unroll
      for (int g = 0; g < C::kD / 32; ++g) {
        std::uint32_t w[4], x[4];  // w[c]: my 2 columns of block 4g + c; x[k]: lane q ^ k's 2 columns of block 4g + q
#pragma unroll
        for (int c = 0; c < 4; ++c)
          w[c] = pack2<C::kBf16>(o[4 * (4 * g + c) + 2 * r] * inv, o[4 * (4 * g + c) + 2 * r + 1] * inv);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const std::uint32_t send = pick4(w, q ^ k);  // lane q ^ k's block, which it gets from me in round k
          x[k] = k == 0 ? send : __shfl_xor_sync(0xffffffffu, send, k);
        }
        // columns 8(4g + q) + 2c + {0, 1} came from lane c, in round q ^ c
        const uint4 v = make_uint4(pick4(x, q), pick4(x, q ^ 1), pick4(x, q ^ 2), pick4(x, q ^ 3));
        if (stored) out[4 * g + q] = v;
      }
      if (stored && q == 0)
        p.lse[(std::size_t(bi) * p.h + hi) * p.n + row] = l[r] > 0.f ? m[r] * p.scale + logf(l[r]) : -INFINITY;
    }
  }

  // One tile; `it` counts the key blocks this block has consumed over all its tiles (the ring's
  // position). `inline_ld`: this thread issues the loads too (warp specialization off). rec: the
  // recorder (record.cuh; Rec<false> in the plain kernel: no code), `step0` the tile's first step
  // (tile (i, j) at step0 + 1 + (T_c - 1 - j), the last step0 + 1 + T_c: docs/events.md "V3").
  // The order is FA3's (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp fwd_step: the previous block's V
  // waited for after GEMM0's issue, inside the named barriers; the last deferred GEMM1 outside
  // them) and the simulator's; init_stats is recorded after the wait for Q (zeroing registers has
  // no order of its own).
  template <class R>
  __device__ void tile(int tile_iter, int& it, int mb, int bi, int hi, bool inline_ld, R& rec, std::uint32_t step0) {
    const int nb = num_n_blocks<C>(p, mb);
    const int tc = R::kRecording ? (p.n + C::kBc - 1) / C::kBc : 0;  // (0: the plain kernel computes nothing)
    const int row0 = mb * C::kBr + wg * 64 + f.row;  // this thread's first row
    const std::uint32_t wrows = std::uint32_t(max(0, min(64, ld.rows_of(mb) - 64 * wg)));  // this warpgroup's rows
    const std::uint8_t me = rec.agent;
    auto step_of = [&](int j) { return step0 + 1 + std::uint32_t(tc - 1 - j); };
    // one consumer event of tile (mb, j), 0 bytes (flashlab::Op / Tensor / Eq names without the namespace)
#define V3_CEV(step, op, x, eq, j, rows, cols)                                                            \
  V3_EV(rec, step, flashlab::Op::op, flashlab::Tensor::x, flashlab::Eq::eq, mb, j, std::uint32_t(rows), \
        std::uint32_t(cols), 0, me)
    auto pp_wait = [&](std::uint32_t step, int j) {
      const std::uint64_t t0 = rec.now();
      pp_sync();
      rec.stamp(What::pp_wait, t0, step, mb, j);
      if constexpr (C::kPingpong) V3_CEV(step, wait, none, none, j, wg, 0);
    };
    auto pp_post = [&](std::uint32_t step, int j) {
      pp_arrive();
      if constexpr (C::kPingpong) V3_CEV(step, arrive, none, none, j, (wg + 1) % C::kConsumerWgs, 0);
    };
    // wait for a full K/V stage (position n)
    // (st = n % kStages, computed by the caller where the plain kernel computed it)
    auto wait_full = [&](bool v, int n, int st, std::uint32_t step, int j) {
      const std::uint64_t t0 = rec.now();
      mbar_wait(v ? ld.v_full(st) : ld.k_full(st), (n / C::kStages) & 1);  // (the plain kernel's order)
      rec.stamp(v ? What::wait_v_full : What::wait_k_full, t0, step, mb, j);
      const int ph = (n / C::kStages) & 1;
      V3_EV(rec, step, flashlab::Op::wait, v ? flashlab::Tensor::V : flashlab::Tensor::K, flashlab::Eq::stage_full,
            mb, j, st, ph, 0, me);
    };
    auto release_kv = [&](bool v, int n, std::uint32_t step, int j) {
      const int st = n % C::kStages, ph = (n / C::kStages) & 1;
      release(v ? ld.v_empty(st) : ld.k_empty(st));
      V3_EV(rec, step, flashlab::Op::arrive, v ? flashlab::Tensor::V : flashlab::Tensor::K, flashlab::Eq::stage_empty,
            mb, j, st, ph, 0, me);
    };
    auto gemm0 = [&](float (&s)[kSRegs], int n, std::uint32_t step, int j) {
      const std::uint64_t t0 = rec.now();
      issue_s(s, n % C::kStages);
      rec.stamp(What::issue_s, t0, step, mb, j);
      V3_CEV(step, compute, none, scores, j, wrows, ld.cols_of(j));
      V3_CEV(step, commit, none, scores, j, 0, 0);
    };
    auto gemm1 = [&](int n, std::uint32_t step, int j) {
      const std::uint64_t t0 = rec.now();
      issue_pv(n % C::kStages);
      rec.stamp(What::issue_pv, t0, step, mb, j);
      V3_CEV(step, compute, none, output_v2, j, wrows, ld.cols_of(j));
      V3_CEV(step, commit, none, output_v2, j, 0, 0);
    };
    // wgmma.wait_group<N> for GEMM eq of block j (S: N = 1 with overlap, the P V group still in flight)
    auto wait_gemm = [&](auto n_c, bool s_group, std::uint32_t step, int j) {
      const std::uint64_t t0 = rec.now();
      wgmma_wait<decltype(n_c)::value>();
      rec.stamp(s_group ? What::wait_s : What::wait_pv, t0, step, mb, j);
      V3_EV(rec, step, flashlab::Op::wait, flashlab::Tensor::none, s_group ? flashlab::Eq::scores : flashlab::Eq::output_v2,
            mb, j, 0, 0, 0, me);
    };
    auto do_softmax = [&](float (&s)[kSRegs], float (&corr)[2], std::uint32_t step, int j) {
      const std::uint64_t t0 = rec.now();
      softmax(s, j, row0, corr);
      rec.stamp(What::softmax, t0, step, mb, j);
      V3_CEV(step, compute, none, softmax_v2, j, wrows, ld.cols_of(j));
    };
    using W0 = std::integral_constant<int, 0>;
    using W1 = std::integral_constant<int, 1>;

#pragma unroll
    for (int i = 0; i < kORegs; ++i) o[i] = 0.f;
    m[0] = m[1] = -INFINITY;
    l[0] = l[1] = 0.f;
    if (inline_ld) {  // the first kStages blocks
      for (int j = tc - 1; j >= nb; --j)  // the skipped blocks' events (the thread block's)
        V3_EV(rec, step_of(j), flashlab::Op::skip, flashlab::Tensor::none, flashlab::Eq::none, mb, j, ld.rows_of(mb),
              ld.cols_of(j), 0, 0);
      ld.load_q(tile_iter, mb, bi, hi, rec, step0);
      for (int k = 0; k < C::kStages && k < nb; ++k) {
        ld.load_kv(false, it + k, nb - 1 - k, bi, hi, rec, step_of(nb - 1 - k), mb);
        ld.load_kv(true, it + k, nb - 1 - k, bi, hi, rec, step_of(nb - 1 - k), mb);
      }
    }
    {
      const std::uint64_t t0 = rec.now();
      mbar_wait(ld.q_full(), tile_iter & 1);
      rec.stamp(What::wait_q_full, t0, step0, mb, -1);
      V3_CEV(step0, wait, Q, stage_full, -1, 0, tile_iter & 1);
      V3_CEV(step0, compute, none, init_stats, -1, wrows, C::kD);
    }
    float s[kSRegs];
    float corr[2];
    if constexpr (C::kIntraOverlap) {
      int j = nb - 1;
      std::uint32_t step = step_of(j);
      wait_full(false, it, it % C::kStages, step, j);
      pp_wait(step, j);
      gemm0(s, it, step, j);
      pp_post(step, j);
      wait_gemm(W0{}, true, step, j);
      reg_fence(s);
      release_kv(false, it, step, j);
      if (inline_ld && C::kStages < nb)
        ld.load_kv(false, it + C::kStages, nb - 1 - C::kStages, bi, hi, rec, step_of(nb - 1 - C::kStages), mb);
      do_softmax(s, corr, step, j);
      convert_p(s);
      int prev_it = it;
      ++it;
      for (int k = 1; k < nb; ++k, ++it) {
        j = nb - 1 - k;
        step = step_of(j);
        const int st = it % C::kStages, pst = prev_it % C::kStages;
        wait_full(false, it, st, step, j);
        pp_wait(step, j);
        gemm0(s, it, step, j);
        wait_full(true, prev_it, pst, step, j + 1);  // V_(j+1) after GEMM0's issue, as FA3's fwd_step
        gemm1(prev_it, step, j + 1);
        pp_post(step, j);
        wait_gemm(W1{}, true, step, j);
        reg_fence(s);
        release_kv(false, it, step, j);
        if (inline_ld && k + C::kStages < nb)
          ld.load_kv(false, it + C::kStages, j - C::kStages, bi, hi, rec, step_of(j - C::kStages), mb);
        do_softmax(s, corr, step, j);
        wait_gemm(W0{}, false, step, j + 1);
        reg_fence(o);
        reg_fence(pf);
        release_kv(true, prev_it, step, j + 1);
        if (inline_ld && k - 1 + C::kStages < nb)
          ld.load_kv(true, prev_it + C::kStages, j + 1 - C::kStages, bi, hi, rec, step_of(j + 1 - C::kStages), mb);
        const std::uint64_t t0 = rec.now();
        rescale_o(corr);
        convert_p(s);
        rec.stamp(What::rescale, t0, step, mb, j);
        prev_it = it;
      }
      release(ld.q_empty());
      step = step0 + 1 + tc;  // the last step: the last block's deferred GEMM1 (its j = 0)
      wait_full(true, prev_it, prev_it % C::kStages, step, 0);
      gemm1(prev_it, step, 0);  // outside the named barriers, as FA3's GEMM1 after its mainloop
      wait_gemm(W0{}, false, step, 0);
      reg_fence(o);
      reg_fence(pf);
      release_kv(true, prev_it, step, 0);
    } else {
      for (int k = 0; k < nb; ++k, ++it) {
        const int j = nb - 1 - k;
        const std::uint32_t step = step_of(j);
        const int st = it % C::kStages;
        wait_full(false, it, st, step, j);
        pp_wait(step, j);
        gemm0(s, it, step, j);
        pp_post(step, j);
        wait_gemm(W0{}, true, step, j);
        reg_fence(s);
        release_kv(false, it, step, j);
        if (k == nb - 1) release(ld.q_empty());
        if (inline_ld && k + C::kStages < nb)
          ld.load_kv(false, it + C::kStages, j - C::kStages, bi, hi, rec, step_of(j - C::kStages), mb);
        do_softmax(s, corr, step, j);
        const std::uint64_t t0 = rec.now();
        rescale_o(corr);
        convert_p(s);
        rec.stamp(What::rescale, t0, step, mb, j);
        wait_full(true, it, st, step, j);
        gemm1(it, step, j);
        wait_gemm(W0{}, false, step, j);
        reg_fence(o);
        reg_fence(pf);
        release_kv(true, it, step, j);
        if (inline_ld && k + C::kStages < nb)
          ld.load_kv(true, it + C::kStages, j - C::kStages, bi, hi, rec, step_of(j - C::kStages), mb);
      }
    }
    const std::uint32_t last = step0 + 1 + tc;
    const std::uint64_t t0 = rec.now();
    epilogue(mb, bi, hi);
    rec.stamp(What::epilogue, t0, last, mb, -1);
    V3_CEV(last, compute, none, finalize_v2, -1, wrows, C::kD);
    V3_EV(rec, last, flashlab::Op::store, flashlab::Tensor::O, flashlab::Eq::none, mb, -1, wrows, C::kD,
          std::uint64_t(wrows) * C::kD * 2, me);
    V3_EV(rec, last, flashlab::Op::store, flashlab::Tensor::L, flashlab::Eq::none, mb, -1, wrows, 1,
          std::uint64_t(wrows) * 4, me);
#undef V3_CEV
  }
};

// The kernel's body; kRec: the instrumented build (record.cuh), rb its buffers (unused otherwise).
template <class C, bool kRec>
__device__ __forceinline__ void forward_body(const Params& p, const RecBuffers& rb) {
  extern __shared__ unsigned char smem_raw[];
  const std::uint32_t base = (smem_addr(smem_raw) + 1023) & ~1023u;
  const Loader<C> ld{p, base, base + C::kOffBar};
  const int consumers = 4 * C::kConsumerWgs;  // releasing warps
  if (threadIdx.x == 0) {
    if constexpr (kRec) rb.smid[blockIdx.x] = smid();
    prefetch_tmap(&p.tm_q);
    prefetch_tmap(&p.tm_k);
    prefetch_tmap(&p.tm_v);
    mbar_init(ld.q_full(), 1);
    mbar_init(ld.q_empty(), consumers);
    for (int s = 0; s < C::kStages; ++s) {
      mbar_init(ld.k_full(s), 1);
      mbar_init(ld.v_full(s), 1);
      mbar_init(ld.k_empty(s), consumers);
      mbar_init(ld.v_empty(s), consumers);
    }
    fence_mbar_init();
  }
  __syncthreads();
  volatile int* slot = reinterpret_cast<volatile int*>(smem_raw + (base - smem_addr(smem_raw)) + C::kOffSlot);
  if (C::kSched == 2 && threadIdx.x == 0) slot[0] = blockIdx.x;  // the first tile (read after the first hand-over)
  const int stride = C::kSched == 1 ? gridDim.x : p.num_tiles;
  const int wg_all = threadIdx.x / 128;
  // steps per tile: tc + 2 (docs/events.md "V3"); 0 in the plain kernel, which numbers no steps
  const int tc = kRec ? (p.n + C::kBc - 1) / C::kBc : 0;
  if (C::kWarpSpec && wg_all == 0) {  // producer warpgroup
    setmaxnreg_dec<C::kProducerRegs>();
    // thread 0 issues the loads; with the dynamic scheduler its whole warp walks the tiles, since a
    // named barrier counts whole warps (the tile exchange)
    if (threadIdx.x < (C::kSched == 2 ? 32 : 1)) {  // (the other threads of the warpgroup end here)
      const bool lead = threadIdx.x == 0;
      Rec<kRec> rec(rb, 0, lead);
      int it = 0, t = blockIdx.x;
      std::uint32_t step0 = 0;
      for (int tile_iter = 0;; ++tile_iter) {
        int next = t + stride;
        if constexpr (C::kSched == 2) {  // fetch the tile after t (none after the last)
          int fetched = 0;
          if (lead && t < p.num_tiles) fetched = atomicAdd(&p.tile_counter[0], 1);
          next = __shfl_sync(0xffffffffu, fetched, 0) + gridDim.x;
        }
        // the hand-over (scheduler "dynamic"): the consumers read t from slot[tile_iter % 2] after this
        // sync; the other slot, last read before it, then takes the next tile
        auto hand_over = [&]() {
          if constexpr (C::kSched == 2) {
            const std::uint64_t t0 = rec.now();
            __syncwarp();
            named_sync_any(C::kBarSched, C::kSchedThreads);
            if (lead) slot[(tile_iter + 1) & 1] = next;
            rec.stamp(What::sched, t0, step0, -1, -1);
          }
        };
        if (t >= p.num_tiles) {
          hand_over();  // the consumers read the end
          break;
        }
        int mb, bi, hi;
        decode_tile<C>(p, t, mb, bi, hi);
        const int nb = num_n_blocks<C>(p, mb);
        const int first = nb < C::kStages ? nb : C::kStages;  // K/V loads that wait on the last tile's releases only
        if (lead) {
          rec.tile(bi * p.h + hi);
          ld.load_q(tile_iter, mb, bi, hi, rec, step0);
          for (int j = tc - 1; j >= nb; --j)  // the skipped blocks (causal: above the diagonal): the thread block's
            V3_EV(rec, step0 + 1 + (tc - 1 - j), flashlab::Op::skip, flashlab::Tensor::none, flashlab::Eq::none, mb,
                  j, ld.rows_of(mb), ld.cols_of(j), 0, 0);
        }
        // the loads of key block k (j = nb - 1 - k), ring position it
        auto load_block = [&](int k) {
          const int j = nb - 1 - k;
          ld.load_kv(false, it, j, bi, hi, rec, step0 + 1 + (tc - 1 - j), mb);
          ld.load_kv(true, it, j, bi, hi, rec, step0 + 1 + (tc - 1 - j), mb);
          ++it;
        };
        if (lead)
          for (int k = 0; k < first; ++k) load_block(k);
        // here, not before the loads: the producer would otherwise wait for the consumers to finish
        // the last tile with loads it could issue (the later ones wait for this tile's releases anyway)
        hand_over();
        if (lead)
          for (int k = first; k < nb; ++k) load_block(k);
        step0 += tc + 2;
        t = next;
      }
      rec.finish();
      if (C::kSched == 2 && lead) {  // the last block to finish fetching resets the counter
        __threadfence();
        if (atomicAdd(&p.tile_counter[1], 1) == int(gridDim.x) - 1) {
          p.tile_counter[0] = 0;
          p.tile_counter[1] = 0;
          __threadfence();
        }
      }
    }
  } else {
    if constexpr (C::kWarpSpec) setmaxnreg_inc<C::kConsumerRegs>();
    const int wg = wg_all - (C::kWarpSpec ? 1 : 0);
    Consumer<C> cs(p, ld, wg, threadIdx.x % 128);
    Rec<kRec> rec(rb, 1 + wg, threadIdx.x % 128 == 0);
    if constexpr (C::kPingpong) {
      if (wg == C::kConsumerWgs - 1) named_arrive(1, 256);  // warpgroup 0 takes the first turn
    }
    const bool inline_ld = !C::kWarpSpec && threadIdx.x == 0;
    int it = 0;
    std::uint32_t step0 = 0;
    for (int tile_iter = 0;; ++tile_iter) {
      int t = blockIdx.x + tile_iter * stride;
      if constexpr (C::kSched == 2) {  // the producer's tile, written before this sync (hand_over)
        const std::uint64_t t0 = rec.now();
        named_sync_any(C::kBarSched, C::kSchedThreads);
        t = slot[tile_iter & 1];
        rec.stamp(What::sched_wait, t0, step0, -1, -1);
      }
      if (t >= p.num_tiles) break;
      int mb, bi, hi;
      decode_tile<C>(p, t, mb, bi, hi);
      rec.tile(bi * p.h + hi);
      cs.tile(tile_iter, it, mb, bi, hi, inline_ld, rec, step0);
      step0 += tc + 2;
    }
    rec.finish();
  }
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1) v3_forward_kernel(const __grid_constant__ Params p) {
  forward_body<C, false>(p, RecBuffers{});
}

// The instrumented build: the same body recording events and stamps into rb (record.cuh).
template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    v3_forward_traced_kernel(const __grid_constant__ Params p, const __grid_constant__ RecBuffers rb) {
  forward_body<C, true>(p, rb);
}

}  // namespace v3
