// warps.hpp — the warp model: how the W warps of a thread block share a tile, and what each warp
// does in each step (docs/warps.md has every rule as a closed form).
//
// Two splits, chosen independently of the loop order (Config::split; V1 defaults to split-K as in
// the FA1 kernels, V2 to split-Q as in FA2 §3.3 "Work partitioning between warps"):
//   split-Q: warp w owns rows [⌊w·B_r/W⌋, ⌊(w+1)·B_r/W⌋) ∩ [0, rows(i)) of the Q block: its own
//            slice of S, its own softmax and its own rows of O. Only barriers guard K_j, V_j.
//   split-K: warp w owns columns [⌊w·B_c/W⌋, ⌊(w+1)·B_c/W⌋) ∩ [0, cols(j)) of S_ij. The row max
//            and the row sum need a cross-warp reduction through shared memory, and the partial
//            products P̃ V of all warps are summed into O through shared memory; O's rows (and the
//            per-row updates of m and l) belong to warps by the split-Q row rule.
// With W = 1 the two splits coincide (no reduction). Uneven splits and ragged tiles give warps of
// different sizes, some idle (no rows or no columns): they still reach every barrier.
//
// The model is written as warp-level events (warp >= 0) inserted into the block-level stream of
// event_recorder.hpp at fixed places (docs/events.md), each carrying the work it stands for, so the
// events and the per-warp counters come from one walk and cannot disagree.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/contract/event.hpp"
#include "flashlab/executor/executor.hpp"

namespace flashlab {

/// The half-open index range [first, first + count) of a slice (elements).
struct WarpSlice {
  std::int64_t first = 0;
  std::int64_t count = 0;
};

/// Slice of `n` valid indices (n <= block) that warp w of W owns when `block` indices are split
/// evenly: [⌊w·block/W⌋, ⌊(w+1)·block/W⌋) ∩ [0, n). Empty (count 0) for an idle warp.
/// Rows: warp_slice(w, W, B_r, rows(i)); columns: warp_slice(w, W, B_c, cols(j)).
WarpSlice warp_slice(std::int64_t w, std::int64_t warps, std::int64_t block, std::int64_t n);

/// What one warp does: matmul FLOPs, non-matmul ops by kind, shared-memory bytes it writes and
/// reads for cross-warp reductions (bytes, fp32 partials), and barriers it waits at.
struct WarpWork {
  std::uint64_t flops = 0;
  std::array<std::uint64_t, kOpKindCount> ops{};
  std::uint64_t smem_write = 0;
  std::uint64_t smem_read = 0;
  std::uint64_t barriers = 0;

  WarpWork& operator+=(const WarpWork& o);
  WarpWork& operator*=(std::uint64_t k);
  std::uint64_t op(OpKind k) const { return ops[int(k)]; }
  bool operator==(const WarpWork&) const = default;
};

/// Receives a step's events in stream order; `work` is null for block-level events (warp = -1)
/// and the work a warp-level event stands for otherwise.
class WarpEventSink {
 public:
  virtual ~WarpEventSink() = default;
  virtual void on_event(const Event& e, const WarpWork* work) = 0;
};

/// Walks step `s`: its block-level events (append_block_events) with the warp-level events of
/// p.split inserted at the places docs/events.md fixes. Only steps of the tile loop have warp
/// events (V2: outer_begin, inner, outer_end; V1: inner); prologue steps, skipped
/// tiles and standard attention have none.
void walk_step_events(const Problem& p, const StepView& s, WarpEventSink& sink);

/// The work of each of the p.warps warps in step s (size p.warps, one (batch, head)).
std::vector<WarpWork> step_warp_work(const Problem& p, const StepView& s);

/// An observer that sums the work of each warp over a run. totals() multiplies by batch * heads.
/// The work of a step depends only on its level, whether it skips, rows(i), cols(j) and its
/// actions, so each such kind of step is walked (step_warp_work) once and its steps counted:
/// counting costs a lookup per step, not a walk of its events.
class WarpCounter : public StepObserver {
 public:
  explicit WarpCounter(const Problem& p);
  void on_step(const StepView& s) override;
  /// Per warp, one (batch, head).
  std::vector<WarpWork> per_head() const;
  /// Per warp summed over every thread block of the run, times batch * heads.
  std::vector<WarpWork> totals() const;

 private:
  struct Kind {
    Level level = Level::prologue;
    bool skip = false;
    std::int64_t rows = 0, cols = 0;  // -1: the step has no i (no j)
    std::vector<Action> actions;
    std::vector<WarpWork> work;  // per warp, one step
    std::uint64_t steps = 0;     // steps of this kind so far
  };
  Kind& kind_of(const StepView& s);

  Problem p_;
  std::vector<Kind> kinds_;
  std::array<std::size_t, 5> last_{};  // per Level: the kind its last step had
};

}  // namespace flashlab
