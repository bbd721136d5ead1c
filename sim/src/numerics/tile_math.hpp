// tile_math.hpp — the equations of the three forward algorithms on the tiles resident on chip
// (the backward's: grad_steps.cpp).
//
// One function per Eq (event.hpp), each the algorithm line it names, in fp32. The observer
// (numerics.cpp) moves tiles between HBM and these buffers; these functions only compute.
// Shapes: rows = rows(i) (N_q for standard attention), cols = cols(j) (N_k), d = head dim.
#pragma once

#include <cstdint>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/numerics/numerics.hpp"

namespace flashlab::tile_math {

using VectorF = Eigen::VectorXf;

/// SRAM (and registers) of one thread block.
struct Chip {
  std::int64_t r0 = 0;  // first query row of sram_Qi (for the mask)
  std::int64_t c0 = 0;  // first key column of sram_Kj (for the mask)
  MatrixF sram_Qi;      // (rows, d)
  MatrixF sram_Kj;      // (cols, d)
  MatrixF sram_Vj;      // (cols, d)
  MatrixF sram_S;       // (rows, cols): S_ij, then P~_ij in place (P for standard attention)
  std::vector<KeyRange> keys;  // (rows): visible columns [first, last] of each row of sram_S
  MatrixF sram_O;       // (rows, d), fp32 accumulator
  MatrixF sram_PV;      // (rows, d), V1's P~_ij V_j before line 12 combines it
  VectorF m, l;         // (rows): running max and sum (V1: m_i, l_i as loaded from HBM)
  VectorF L;            // (rows): logsumexp after finalize / softmax_dense
  VectorF m_new, l_new; // (rows)
  VectorF m_tilde, l_tilde;  // (rows): V1's per-tile m~_ij, l~_ij
  VectorF alpha, beta;  // (rows): e^(m - m_new) and V1's e^(m~ - m_new)
};

/// V1 line 2 / V2 line 4: O = 0 (rows, d), l = 0, m = -inf; L = +inf until finalized.
void init_stats(Chip& c, std::int64_t rows, std::int64_t d);

/// The visible columns of each row of sram_S (row r0 + a sees key c0 + b iff
/// lo <= c0 + b - r0 - a <= hi); `full` tiles see every column.
void set_visible(Chip& c, const Band& band, bool full);

/// V1 line 9 / V2 line 8 / standard line 1: S = scale * Q_i K_j^T in fp32, then -inf on the
/// elements the band hides (set_visible).
void scores(Chip& c, double scale, const Band& band, bool full);

/// V2 line 9: m_new = max(m, rowmax S); P~ = exp(S - m_new); l = e^(m - m_new) l + rowsum P~.
void softmax_v2(Chip& c);
/// V2 line 10: O = diag(e^(m_old - m_new)) O + cast_to_dtype(P~) V_j.
void output_v2(Chip& c, Dtype t);
/// V2 lines 12-13: O = diag(l)^-1 O, L = m + ln l; rows with l = 0: O = 0, L = +inf.
void finalize_v2(Chip& c);

/// Split-KV, a split's epilogue: O = diag(l)^-1 O, L = m + ln l on the split's keys; rows with
/// l = 0 (no visible key in the split): O = 0, L = -inf (FA2's empty-split convention, so that the
/// combine weighs them 0).
void finalize_split(Chip& c);

/// The K/V outer order with delayed rescaling, at the end of a Q block: O = diag(l)^-1 O (FA2
/// Alg. 1 line 12's division alone; L comes from m and l in HBM); rows with l = 0: O = 0.
void normalize(Chip& c);

/// V1 lines 10-11: m~ = rowmax S, P~ = exp(S - m~), l~ = rowsum P~; m_new = max(m, m~),
/// l_new = e^(m - m_new) l + e^(m~ - m_new) l~.
void softmax_v1(Chip& c);
/// V1 line 12: O = diag(l_new)^-1 (diag(l) e^(m - m_new) O + e^(m~ - m_new) cast_to_dtype(P~) V_j);
/// then m = m_new and l = l_new, the values line 13 writes. Rows with l_new = 0 keep O = 0.
void output_v1(Chip& c, Dtype t);

/// Standard line 2: P = softmax(S) in place, with m = rowmax S, l = rowsum exp(S - m) and
/// L = m + ln l kept for comparison; fully masked rows: P = 0, L = +inf.
void softmax_dense(Chip& c);
/// Standard line 3: O = P V, accumulated in fp32.
void output_dense(Chip& c);

/// L = m + ln l per row; +inf where l = 0 (no visible key yet).
VectorF logsumexp(const VectorF& m, const VectorF& l);

/// m where finite, 0 where m = -inf or +inf (a row that has seen no visible key, or L of a row
/// that has none): subtracting it gives exp(-inf - 0) = 0 instead of NaN.
VectorF finite_or_zero(const VectorF& m);

/// S = exp(S - shift) on each row's visible columns (keys), exactly 0 elsewhere; rowsum into `sum`.
void exp_rows(MatrixF& S, const std::vector<KeyRange>& keys, const VectorF& shift, VectorF& sum);

}  // namespace flashlab::tile_math
