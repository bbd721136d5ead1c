// tensor_shape.hpp — what indexes each tensor's rows, how wide a row is and how many bytes an
// element takes: the one table that the counting model, the sector counter, the L2 model and the
// numerics read (docs/model.md "Notation").
#pragma once

#include <cstdint>

#include "flashlab/contract/event.hpp"

namespace flashlab {

/// What a tensor's rows are, for one (batch, head).
enum class RowsOf : std::uint8_t {
  query,  // N_q rows: Q O l m L dO dQ D dQacc, and N_q rows per split: Oacc Lacc (a Q block i
          // holds rows(i) of them, per split)
  key,    // N_k rows: K V dK dV (a K/V block j holds cols(j) of them)
  score,  // N_q x N_k: S P dP dS (standard attention's whole matrices)
};

struct TensorShape {
  RowsOf rows = RowsOf::query;
  bool stat = false;  // one fp32 value per row (l m L D); otherwise d values per row (or N_k: scores)
  bool fp32 = false;  // 4-byte elements whatever the input type (l m L D dQacc Oacc Lacc); otherwise e_in
  bool per_split = false;  // one copy per split of the K/V blocks (Oacc Lacc: splits x N_q rows)
};

/// The shape of tensor t (Tensor::none: a query tensor of width d, never moved).
constexpr TensorShape tensor_shape(Tensor t) {
  switch (t) {
    case Tensor::K: case Tensor::V: case Tensor::dK: case Tensor::dV: return {RowsOf::key, false, false};
    case Tensor::S: case Tensor::P: case Tensor::dP: case Tensor::dS: return {RowsOf::score, false, false};
    case Tensor::l: case Tensor::m: case Tensor::L: case Tensor::D: return {RowsOf::query, true, true};
    case Tensor::dQacc: return {RowsOf::query, false, true};
    case Tensor::Oacc: return {RowsOf::query, false, true, true};
    case Tensor::Lacc: return {RowsOf::query, true, true, true};
    default: return {RowsOf::query, false, false};
  }
}

constexpr bool per_query(Tensor t) { return t != Tensor::none && tensor_shape(t).rows == RowsOf::query; }
constexpr bool per_key(Tensor t) { return tensor_shape(t).rows == RowsOf::key; }
constexpr bool score_matrix(Tensor t) { return tensor_shape(t).rows == RowsOf::score; }
constexpr bool is_stat(Tensor t) { return tensor_shape(t).stat; }
constexpr bool per_split(Tensor t) { return tensor_shape(t).per_split; }

/// Elements per row of a query or key tensor: 1 for the statistics, d otherwise.
constexpr std::int64_t row_width(Tensor t, std::int64_t d) { return is_stat(t) ? 1 : d; }

/// Bytes per element: 4 for the fp32 tensors (l m L D dQacc Oacc Lacc), e_in for the others.
constexpr int element_bytes_of(Tensor t, int e_in) { return tensor_shape(t).fp32 ? 4 : e_in; }

}  // namespace flashlab
