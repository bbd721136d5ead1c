// numerics.hpp — the real numbers: O, L and the running m, l of a schedule, computed step by step
// with Eigen as the executor walks it, and a float64 dense reference to compare them with.
//
// Inputs are rounded to the dtype (Eigen::half / Eigen::bfloat16 for fp16 / bf16); arithmetic
// accumulates in fp32; P is cast to the input dtype before P V, as the FA2 kernels do; O is stored
// at the input dtype, L in fp32. Rows with no visible key give O = 0 and L = +inf, never NaN.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "flashlab/config.hpp"

namespace flashlab {

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// How to fill one input matrix (shared/cases conventions): seeded N(0, 1) values, zeros, a
/// constant, or "index" (row j holds the value j, as in V_j = j).
struct Fill {
  enum class Kind : std::uint8_t { random, zero, constant, index } kind = Kind::random;
  float value = 0;  // Kind::constant
};
/// Parses "random", "zero", "index" or a number (a constant). Throws ConfigError(field, ...).
Fill parse_fill(std::string_view field, std::string_view text);

/// Q (N_q, d), K (N_k, d), V (N_k, d) of one (batch, head), values already representable in the
/// problem's dtype (held as float).
struct Inputs {
  MatrixF Q, K, V;
};
/// Builds the inputs of p and rounds them to p.dtype. `seed` drives the random fills.
Inputs make_inputs(const Problem& p, Fill q, Fill k, Fill v, std::uint64_t seed);

/// m and l of one Q block after one step (a visited tile, or the block's final step).
struct StatSnapshot {
  std::uint32_t step = 0;       // step number within the block (as in events)
  std::int64_t j = -1;          // K/V block just processed (-1: initial / final step)
  std::vector<float> m, l;      // rows(i) values each
};

struct NumericsOptions {
  std::vector<std::int64_t> trace_blocks;  // Q blocks whose m and l are recorded after every step
};

/// What a simulated run computed.
struct NumericResult {
  MatrixF O;                    // (N_q, d), values at the input dtype
  Eigen::VectorXf L;            // (N_q), fp32; +inf for rows with no visible key (V2 only)
  std::vector<std::vector<StatSnapshot>> traces;  // one per NumericsOptions::trace_blocks entry
};

/// Runs p's schedule through the executor with numerics on, one (batch, head).
NumericResult simulate(const Problem& p, const Inputs& in, const NumericsOptions& opt = {});

/// Dense float64 reference: O = softmax(scale Q K^T + mask) V and L = logsumexp per row, on the
/// same (already rounded) inputs. Rows with no visible key: O = 0, L = +inf.
struct Reference {
  MatrixD O;
  Eigen::VectorXd L;
};
Reference reference(const Problem& p, const Inputs& in);

/// Errors of a result against the reference. NaN anywhere makes `finite` false.
struct NumericError {
  double max_abs_O = 0;   // max |O - O_ref|
  double rel_fro_O = 0;   // ||O - O_ref||_F / ||O_ref||_F (0 when O_ref = 0 and O = 0)
  double max_abs_L = 0;   // max |L - L_ref| over rows with a finite L_ref
  bool finite = true;     // no NaN in O or L, and L = +inf exactly where L_ref = +inf
};
NumericError compare(const NumericResult& r, const Reference& ref, Algo algo);

/// Tolerance on rel_fro_O by dtype (fp32 1e-5, fp16 2e-3, bf16 1.6e-2; docs/model.md).
double tolerance(Dtype t);

}  // namespace flashlab
