// sector_counter.hpp — the sector level (memory.hpp Memory::sector): every load and store of the
// walk in whole 32-byte sectors, as the project's CUDA kernels move it, for all batch * heads.
// What Nsight Compute's l1tex__t_bytes_pipe_lsu_mem_global_op_{ld,st} count for those kernels.
//
// The kernels' layout (kernels/include/flashlab/kernels/api.hpp): Q, O (bh, N_q, d) and K, V
// (bh, N_k, d) at e_in bytes; l, m, L (bh, N_q) fp32; standard attention's S, P (bh, N_q, ld) at
// e_in bytes with ld = N_k rounded up to 16 elements, so that every row starts on a sector; all
// from 256-byte aligned allocations. The rules:
//   - a run of rows of Q K V O (d e_in bytes each) or of l m L (4 bytes each) is contiguous and is
//     moved in warp requests from its first byte: 32 threads x 16 bytes for e_in tensors, 32 rows
//     for fp32 statistics; each request counts the sectors it touches. Rows of d e_in bytes (a
//     multiple of 32 for every d the kernels compile) count exactly; statistics runs that start
//     or end inside a sector count the whole sector, once per request;
//   - a row of S or P is moved in pieces of whole 16-byte chunks: one per K/V block j (cols(j)
//     elements) in a launch with a sequential K/V-block loop (S = QK^T, O = PV), the whole row
//     (N_k elements) otherwise (the softmax);
//   - whole-tensor actions (standard attention's lines, V1 line 2) are split among the launch's
//     thread blocks: per Q block or per row for per-query tensors and S, P; every thread block
//     reads all of K and V, in K/V blocks when the launch loops over them (so K and V are read
//     T_r times where Algorithm 0, and the hbm level, read them once);
//   - split-KV's Oacc (splits, bh, N_q, d) and Lacc (splits, bh, N_q), fp32, split-major: a split's
//     copy of a (batch, head) starts (s bh + b H + h) N_q rows in, moved like dQacc and L;
//   - the backward's tensors lie as their forward counterparts (tensor_shape.hpp): dO, dQ as Q,
//     dK, dV as K, D as L, dP, dS as S; dQacc is fp32 rows of d, moved (and added to: atomics count
//     as their own direction) in the same 512-byte requests; the deterministic backward's nsplits
//     slices of dQacc lie split-major like Oacc (FA2's (nsplits, b, N_q, h, d)). Checked against
//     Nsight Compute per launch on PyTorch's FA2 backward (tests/sim/executor/fa2_backward_bytes_test.cpp:
//     18 calls, every figure to the byte);
//   - a tensor that some action moves in padded blocks (Action::padded: FA2's dQaccum and D) has
//     T_r B_r rows a head, and a padded action moves B_r rows of every Q block; a region of the
//     K/V head (Action::per_kv_head) counts 1 / group of its sectors in each query head;
//   - a TMA box (Action::tma_box: V3's loads of Q, K, V) moves B_r (B_c) rows of every block, the
//     last one's rows past N_q (N_k) too: the copy engine requests them and fills them with zeros;
//   - statistics gathered from an accumulator layout (Action::request_rows: FA2's main backward
//     kernel, 8 rows) move in requests of that many rows.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// Bytes that a contiguous access of n bytes at byte address a occupies in 32-byte sectors.
std::uint64_t sector_bytes(std::uint64_t a, std::uint64_t n);

/// A memory level of the walk, attached by whoever wants it (Executor::add_level; count.hpp count
/// with `sectors`, the time model's model()) for the schedule `s` that the executor walks.
class SectorCounter : public LevelObserver {
 public:
  SectorCounter(const Problem& p, const Schedule& s);
  void on_step(const StepView& s) override;
  /// Sets c.levels[sector] to bytes() and c.sectors.
  void add_levels(Counters& c, bool finished) const override;
  /// Sector bytes so far, [tensor][read|write|atomic], all batch * heads.
  const TensorBytes& bytes() const { return bytes_; }
  /// The same for launch k of the schedule alone (what Nsight Compute reports per kernel).
  const TensorBytes& launch_bytes(std::size_t k) const { return launch_bytes_.at(k); }

 private:
  // Multiplicities of start addresses modulo 32: (residue, how many).
  using Residues = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  // How a tensor's rows lie in memory, over all (batch, head).
  struct Layout {
    std::uint64_t row = 0;      // bytes per row
    std::uint64_t request = 0;  // bytes per warp request (a multiple of 32)
    Residues heads;             // start of each (batch, head)'s tensor, mod 32
    // the last run counted (consecutive tiles repeat it: K_j then V_j, full block after full block)
    mutable std::uint64_t last_start = ~std::uint64_t(0), last_rows = 0, last_bytes = 0;
  };
  // What a launch's thread blocks split whole-tensor actions by.
  struct Shape {
    Dim split = Dim::batch;     // q_block, q_row, or batch for none (one thread block per head)
    bool kv_tiles = false;      // a sequential K/V-block loop
    std::uint64_t blocks = 1;   // thread blocks per (batch, head)
  };

  // Tensor t's layout; a per-split tensor's, split s's copy.
  const Layout& layout(Tensor t, std::int64_t s = 0, bool gathered = false) const;
  // n_rows rows from offset `start` (bytes, mod 32) within every (batch, head)'s tensor.
  std::uint64_t rows(const Layout& l, std::uint64_t start, std::uint64_t n_rows) const;
  // The same for every start in `starts`, each counted its number of times.
  std::uint64_t rows(const Layout& l, const Residues& starts, std::uint64_t n_rows) const;
  std::uint64_t rows_at(Tensor t, std::int64_t first, std::int64_t n_rows, std::int64_t s = 0,
                        bool gathered = false) const;
  std::uint64_t whole(const Shape& s, Tensor t) const;
  std::uint64_t score_row(std::uint64_t col0, std::uint64_t cols) const;

  Problem p_;
  Layout query_, key_, stats_, query32_;  // query32_: fp32 rows of d (dQacc)
  Layout padded_stats_;                   // D where it is moved in padded blocks: T_r B_r rows a head
  Layout gathered_stats_, gathered_padded_stats_;  // the same in requests of Action::request_rows rows
  std::vector<Layout> oacc_, lacc_;       // by split: Oacc (fp32 rows of d), Lacc (fp32 statistics)
  std::vector<Layout> dqacc_;             // by slice: dQacc (fp32 rows of d; one unless deterministic)
  std::vector<Shape> shapes_;  // by launch
  Residues full_q_blocks_, full_kv_blocks_, all_q_rows_;  // first rows of full blocks, of every row
  std::array<bool, kTensorCount> padded_{};  // moved in padded blocks (Action::padded) somewhere
  TensorBytes bytes_{};
  std::vector<TensorBytes> launch_bytes_;  // by launch
};

}  // namespace flashlab
