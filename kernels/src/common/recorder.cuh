// recorder.cuh — the instrumented build's event recorder (shared/DESIGN.md "Events and traces").
//
// Recorder<true> appends flashlab::Event records (event.hpp, the simulator's own struct) to a
// device buffer; Recorder<false> is empty and every call on it compiles to nothing, so the plain
// build pays nothing. One thread per thread block records (thread 0 of the traced (batch, head)),
// in program order, so that a stable sort by (launch, block, step) on the host restores the stream.
// Rows x cols and bytes are computed here from the kernel's own loop variables, independently of
// the simulator's cost model: equality of the two streams is the check.
#pragma once

#include <cstdint>

#include "flashlab/contract/event.hpp"
#include "flashlab/kernels/api.hpp"

namespace flashlab::gpu {

template <bool kRecord>
class Recorder {
 public:
  /// `bh`: this thread block's (batch, head); `block`: its program id within the head (the
  /// simulator's Event::block: the Q block i for V2, 0 for V1 and standard attention).
  /// `events`: false for thread blocks that only write statistics (standard attention's kernels
  /// record their whole-kernel events from one thread block).
  __device__ Recorder(const TraceBuffers& trace, std::int64_t bh, std::uint32_t block, bool events = true) {
    if constexpr (kRecord) {
      t_ = trace;
      block_ = block;
      on_ = events && bh == trace.traced_bh && threadIdx.x == 0;
      stats_on_ = bh == trace.traced_bh && trace.stats != nullptr;
    }
  }

  __device__ void load(std::uint32_t step, Tensor x, int i, int j, std::int64_t rows, std::int64_t cols, int e) {
    put(step, Op::load, x, Eq::none, i, j, rows, cols, std::uint64_t(rows) * std::uint64_t(cols) * e);
  }
  __device__ void store(std::uint32_t step, Tensor x, int i, int j, std::int64_t rows, std::int64_t cols, int e) {
    put(step, Op::store, x, Eq::none, i, j, rows, cols, std::uint64_t(rows) * std::uint64_t(cols) * e);
  }
  /// An atomic read-modify-write (the backward's dQ_i added to dQacc): bytes of the values added.
  __device__ void atomic(std::uint32_t step, Tensor x, int i, int j, std::int64_t rows, std::int64_t cols, int e) {
    put(step, Op::atomic, x, Eq::none, i, j, rows, cols, std::uint64_t(rows) * std::uint64_t(cols) * e);
  }
  __device__ void compute(std::uint32_t step, Eq eq, int i, int j, std::int64_t rows, std::int64_t cols) {
    put(step, Op::compute, Tensor::none, eq, i, j, rows, cols, 0);
  }
  __device__ void skip(std::uint32_t step, int i, int j, std::int64_t rows, std::int64_t cols) {
    put(step, Op::skip, Tensor::none, Eq::none, i, j, rows, cols, 0);
  }

  /// True for the threads that write m, l snapshots of Q block i.
  __device__ bool stats_for(int i) const {
    if constexpr (kRecord) return stats_on_ && i >= 0 && i == t_.stat_block;
    else return false;
  }
  /// m and l of row `row` (within the Q block) after step `step`. Natural-log units: m is the
  /// row max of scale * S (-inf before any visible key), l the row sum of exp(scale * S - m).
  __device__ void stat(std::uint32_t step, int row, int b_r, float m, float l) {
    if constexpr (kRecord) {
      if (step >= t_.stat_steps) return;
      t_.stats[(std::size_t(step) * 2 + 0) * b_r + row] = m;
      t_.stats[(std::size_t(step) * 2 + 1) * b_r + row] = l;
      t_.stat_written[step] = 1;
    }
  }

 private:
  __device__ void put(std::uint32_t step, Op op, Tensor x, Eq eq, int i, int j, std::int64_t rows,
                      std::int64_t cols, std::uint64_t bytes) {
    if constexpr (kRecord) {
      if (!on_) return;
      const unsigned slot = atomicAdd(t_.count, 1u);
      if (slot >= t_.capacity) return;  // the host sees count > capacity and reports it
      Event e;
      e.launch = t_.launch;
      e.block = block_;
      e.step = step;
      e.bytes = bytes;
      e.i = i;
      e.j = j;
      e.rows = std::uint32_t(rows);
      e.cols = std::uint32_t(cols);
      e.op = op;
      e.tensor = x;
      e.eq = eq;
      t_.events[slot] = e;
    }
  }

  // Set only in the instrumented build; the plain build never reads them (dead code, removed).
  TraceBuffers t_{};
  std::uint32_t block_ = 0;
  bool on_ = false, stats_on_ = false;
};

}  // namespace flashlab::gpu
