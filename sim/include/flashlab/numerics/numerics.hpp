// numerics.hpp — the real numbers: O, L and the running m, l of a schedule, computed step by step
// with Eigen as the executor walks it, and a float64 dense reference to compare them with.
//
// Numerics is a StepObserver (executor.hpp): it reacts to the actions of every step — loads copy
// a tile from "HBM" into "SRAM" buffers, compute actions evaluate their equation (Eq) on the
// resident tiles, stores copy back — so the numbers follow the schedule exactly. The counting
// fast path (count()) never sees it; numerics is opt-in by adding the observer.
//
// Inputs are rounded to the dtype (Eigen::half / Eigen::bfloat16 for fp16 / bf16); arithmetic
// accumulates in fp32; P~ is cast to the input dtype before P~ V, as the FA2 kernels do; O is
// stored at the input dtype, the statistics m, l, L in fp32. Rows with no visible key give O = 0
// and L = +inf (FA2's convention), never NaN.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/executor.hpp"

namespace flashlab {

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// How to fill one input matrix (the `run --q/--k/--v` values): seeded N(0, 1) values, zeros, a
/// constant, or "index" (row j holds the value j in every column, as in V_j = j).
struct Fill {
  enum class Kind : std::uint8_t { random, zero, constant, index } kind = Kind::random;
  float value = 0;  // Kind::constant
};
/// Parses "random", "zero", "index" or a finite number (a constant). Throws
/// ConfigError(field, text, allowed) for anything else.
Fill parse_fill(std::string_view field, std::string_view text);
/// parse_fill, and a constant must be a value of dtype t: |x| <= dtype_max(t). Throws
/// ConfigError(field, text, "a finite number representable in fp16 (|x| <= 65504)") for one that
/// is not (inf and nan included).
Fill parse_fill(std::string_view field, std::string_view text, Dtype t);
/// The largest finite value of dtype t: fp16 65504, bf16 3.3895e38, fp32 3.4028e38.
double dtype_max(Dtype t);

/// Q (N_q, d), K (N_k, d), V (N_k, d) of one (batch, head), values already representable in the
/// problem's dtype (held as float); dO (N_q, d), the gradient of the loss with respect to O, the
/// backward pass's input (empty for a forward-only problem).
struct Inputs {
  MatrixF Q, K, V;
  MatrixF dO;
};
/// Builds the inputs of p and rounds them to p.dtype. Throws ConfigError("q" / "k" / "v") for a
/// constant fill beyond dtype_max(p.dtype), or an index fill whose last row index is beyond it. `seed` drives the random fills: the same
/// (seed, fill, shape) gives the same values on every machine (mt19937_64 + Box-Muller), and Q,
/// K, V draw from separate streams, so changing one fill leaves the others as they were.
Inputs make_inputs(const Problem& p, Fill q, Fill k, Fill v, std::uint64_t seed);
/// The same, and when p runs the backward pass (p.backward()) dO from `dO` (field "do"), drawn from
/// a stream of its own: the same seed gives the same Q, K, V with or without it.
Inputs make_inputs(const Problem& p, Fill q, Fill k, Fill v, Fill dO, std::uint64_t seed);

/// Rounds every element of x to the nearest value of dtype t (round to nearest even, through
/// Eigen::half / Eigen::bfloat16); fp32 leaves x unchanged.
void round_to_dtype(Dtype t, Eigen::Ref<MatrixF> x);

/// m and l of one Q block after one step.
struct StatSnapshot {
  std::uint32_t step = 0;       // the step number within its thread block, as the executor numbers it
  std::int64_t j = -1;          // K/V block of the step's tile (-1: a step without a tile)
  bool skip = false;            // the step skipped tile (i, j) (block skip): no key of block j was seen
  std::vector<float> m, l;      // rows(i) values each, fp32 (m = -inf and l = 0 before any visible key)
};

struct NumericsOptions {
  /// Q blocks whose m and l are recorded: V2 after each step of the block's thread block; V1
  /// after line 2 and after each step on a tile (i, j) of the block (the HBM values); standard
  /// after the softmax and output steps (rowmax and rowsum of S).
  std::vector<std::int64_t> trace_blocks;
};

/// What a simulated run computed.
struct NumericResult {
  MatrixF O;                    // (N_q, d), values at the input dtype
  Eigen::VectorXf L;            // (N_q), fp32; +inf for rows with no visible key (every algorithm).
                                // V2 stores L; V1 and standard do not, so theirs is m + ln l after
                                // the run (for comparison, not an HBM write)
  std::vector<std::vector<StatSnapshot>> traces;  // one per NumericsOptions::trace_blocks entry
  // The backward pass (p.backward(); empty otherwise). dQ (N_q, d), dK and dV (N_k, d) at the input
  // dtype as the schedule last stored them (NaN where it never did); D (N_q) fp32 as stored by V2
  // (FA2 Alg. 2 line 4), rowsum(dO o O) recomputed from the stored O for V1 and standard, which
  // keep it on chip. Rows of dQ with no visible key are 0; keys no query sees get dK = dV = 0.
  MatrixF dQ, dK, dV;
  Eigen::VectorXf D;
};

/// What the forward leaves in HBM for the backward to read: O (N_q, d) at the dtype, and the
/// statistics of the algorithm's forward — L (V2), m and l (V1), P (N_q, N_k, standard).
struct ForwardHbm {
  MatrixF O;
  Eigen::VectorXf L, m, l;
  MatrixF P;
};

/// The numerics as an executor observer. Add it to an Executor of the same Problem before the
/// first step; `in` must outlive it. Throws ConfigError when the shapes of `in` do not match p
/// (field "inputs.Q" etc.) or a traced block is outside [0, T_r) (field "trace block").
class NumericsObserver final : public StepObserver {
 public:
  NumericsObserver(const Problem& p, const Inputs& in, NumericsOptions opt = {});
  /// The numerics of forward schedule `forward` (a schedule written by hand) instead of p's own.
  NumericsObserver(const Problem& p, const Schedule& forward, const Inputs& in, NumericsOptions opt = {});
  ~NumericsObserver() override;
  NumericsObserver(const NumericsObserver&) = delete;
  NumericsObserver& operator=(const NumericsObserver&) = delete;

  void on_step(const StepView& s) override;
  /// O and L as they stand in HBM (complete once the executor is done; rows not yet written
  /// read NaN, so a row a schedule never writes shows up), and the traces so far; with a backward
  /// pass, dQ, dK, dV and D too.
  NumericResult result() const;
  /// The forward's tensors in HBM, as the backward's launches read them.
  ForwardHbm forward_hbm() const;

 private:
  friend NumericResult simulate(const Problem& p, const Inputs& in, const NumericsOptions& opt, StepObserver* also);
  struct State;
  std::unique_ptr<State> st_;
};

/// Numerics of p within reach (limits.hpp), or ConfigError: N_q*N_k <= 2^28 ("nq*nk": the float64
/// reference's scores, 2 GiB) and N_q*N_k*max(d, 64) <= 2^34 ("nq*nk*max(d,64)": the multiply-adds
/// of the reference and of the simulation), and no grouped K/V heads with --kernel fa2's backward
/// ("kv-heads": its at::sum adds over query heads; the numerics walk one). What `flashlab run`,
/// `trace --stats-blocks` and the Python module's run() accept.
void check_numerics_size(const Problem& p);

/// Runs p's schedule through an executor with numerics on, one (batch, head). For p.pass ==
/// backward the forward's launches run first (not counted anywhere) to leave O and its statistics
/// in HBM, as a training step's forward would; `in.dO` must then be (N_q, d).
NumericResult simulate(const Problem& p, const Inputs& in, const NumericsOptions& opt = {},
                       StepObserver* also = nullptr);

/// The forward numerics of schedule `s` (a schedule written by hand, schedule_json.hpp) on problem
/// p, as simulate() walks p's own. Throws ConfigError("pass", ...) unless p.pass is forward, and
/// ConfigError("schedule", ...) when a step moves or computes what a forward's numerics do not
/// hold (a backward tensor or equation), naming it.
NumericResult simulate(const Problem& p, const Schedule& s, const Inputs& in, const NumericsOptions& opt = {});

/// Split-KV's combine (FA2's combine_attn_seqk_parallel, Flash-Decoding's reduction; docs/model.md
/// "Split-KV"), in fp32, row by row: with mx = max_s L_s and a its first argmax,
/// L = mx + log1p(sum_{s != a} exp(L_s - mx)) and O = sum_s exp(L_s - L) O_s. Every exponent is
/// <= 0, so nothing overflows: partial results whose L differ by 200 give L = the larger and O =
/// its O. A row whose L_s are all -inf (no split saw a visible key) gives O = 0, L = +inf (what
/// the unsplit V2 writes). `parts_O`: one (rows, d) matrix per split; `parts_L`: (rows, splits).
/// Throws std::invalid_argument when the shapes disagree.
struct Merged {
  MatrixF O;          // (rows, d)
  Eigen::VectorXf L;  // (rows)
};
Merged merge_splits(const std::vector<MatrixF>& parts_O, const MatrixF& parts_L);

/// Dense float64 reference: O = softmax(scale Q K^T + mask) V and L = logsumexp per row, on the
/// same (already rounded) inputs. Rows with no visible key: O = 0, L = +inf.
struct Reference {
  MatrixD O;          // (N_q, d)
  Eigen::VectorXd L;  // (N_q)
  Dtype dtype = Dtype::fp32;    // the problem's input type, for the tolerances of compare()
  Eigen::VectorXd logit_bound;  // (N_q): B_r = |scale| ||q_r||_2 max_j ||k_j||_2 >= |S_rj| for every key j
                                // (Cauchy-Schwarz), the size the fp32 rounding of row r's logits scales
                                // with; empty: 0 for every row
};
Reference reference(const Problem& p, const Inputs& in);

/// Dense float64 gradients (the chain rule through softmax, FA1 paper Appendix B.2): P = softmax(scale
/// Q K^T + mask), dV = P^T dO, dP = dO V^T, D = rowsum(dO o O) = rowsum(P o dP), dS = P o (dP - D),
/// dQ = scale dS K, dK = scale dS^T Q, on the same rounded inputs (in.dO must be (N_q, d)). Rows
/// with no visible key have P = 0: dQ = 0 there, and they add nothing to dK, dV; D = 0.
struct GradReference {
  MatrixD dQ, dK, dV;  // (N_q, d), (N_k, d), (N_k, d)
  Eigen::VectorXd D;   // (N_q)
};
GradReference grad_reference(const Problem& p, const Inputs& in);

/// Errors of the backward's results against grad_reference: ||x - x_ref||_F / ||x_ref||_F
/// (||x - x_ref||_F when x_ref = 0) for dQ, dK, dV and the largest |D - D_ref|.
struct GradError {
  double rel_fro_dQ = 0, rel_fro_dK = 0, rel_fro_dV = 0, max_abs_D = 0;
  double tol = 0;        // tolerance_grad(p)
  bool finite = true;    // no NaN or inf in dQ, dK, dV, D
  bool within = false;   // finite and the three relative errors <= tol
};
GradError compare_grads(const NumericResult& r, const GradReference& ref, const Problem& p);

/// Tolerance on the relative errors of dQ, dK, dV: 8 u of the dtype (fp32: 1e-4) — P and dS are
/// rounded to the dtype before their matmuls and O, stored at the dtype, enters D — plus, for V1
/// and V2's paper form, which round dQ_i to the dtype at every step that adds to it, u sqrt(n)
/// with n the most tiles a Q block visits (as tolerance_O for V1's O). reference.cpp derives it.
double tolerance_grad(const Problem& p);

/// Errors of a result against the reference. NaN anywhere makes `finite` false.
struct NumericError {
  double max_abs_O = 0;   // max |O - O_ref|
  double rel_fro_O = 0;   // ||O - O_ref||_F / ||O_ref||_F (||O - O_ref||_F when O_ref = 0)
  double max_abs_L = 0;   // max |L - L_ref| over rows with a finite L_ref; NaN when such a row's L is not finite
  double tol_O = 0;       // tolerance_O(p): the bound rel_fro_O is held to
  double L_over_tol = 0;  // max over rows r of |L_r - L_ref,r| / tolerance_L(row r); NaN like max_abs_L
  double tol_L = 0;       // tolerance_L of the row where that ratio is largest (the first such row on a tie;
                          // of L_ref = 0, B = 0 when no row has a finite L_ref)
  bool finite = true;     // no NaN in O or L, and L = +inf exactly where L_ref = +inf
  bool within = false;    // finite, rel_fro_O <= tol_O and L_over_tol <= 1
};
/// Compares r, computed by p's algorithm, with ref (computed for p's shape and dtype). Throws
/// ConfigError when the shapes differ. The one check of numbers that `flashlab run` and
/// flashlab-gpu (kernels/host) share.
NumericError compare(const NumericResult& r, const Reference& ref, const Problem& p);

/// The unit roundoff of dtype t (half the spacing of its numbers at 1): fp16 2^-11, bf16 2^-8,
/// fp32 2^-24.
double unit_roundoff(Dtype t);
/// The dtype's part of the tolerance on rel_fro_O: fp32 1e-5, fp16 2e-3, bf16 1.6e-2 (4 units of
/// roundoff of the dtype; fp32: the accumulation over N_k terms dominates). Derivation in
/// reference.cpp and docs/model.md "Numerics: errors and tolerances".
double tolerance(Dtype t);
/// How many times V1 (FA1 Algorithm 1 line 12) rounds a row block of O to the dtype: the most
/// tiles any Q block visits (T_c with block skip off). The same for every variant with the K/V
/// outer order (--order kv-outer); 0 for standard attention and the Q outer order (V2), which
/// round O once.
std::int64_t v1_rounding_steps(const Problem& p);
/// Tolerance on rel_fro_O for p's algorithm: tolerance(dtype), plus for V1 u sqrt(n) with n =
/// v1_rounding_steps(p) — three times the RMS error u sqrt(n) / 3 of V1's n round trips of O_i
/// through the dtype (reference.cpp).
double tolerance_O(const Problem& p);
/// Tolerance on |L - L_ref| of one row of d-wide Q and K, with reference L_ref and logit bound B
/// (Reference::logit_bound): 1e-4 + 2^-22 |L_ref| + (d + 2) 2^-24 B, and for standard attention,
/// which stores S at the dtype, u B more. Derived in reference.cpp: the errors of fp32 numbers
/// scale with their size, so the bound on L does too.
double tolerance_L(Dtype t, Algo a, std::int64_t d, double L_ref, double logit_bound);

}  // namespace flashlab
