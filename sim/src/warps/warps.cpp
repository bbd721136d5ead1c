// warps.cpp — the warp model as warp-level events inserted into a step's stream (see warps.hpp;
// every rule is a row of docs/warps.md, the positions are docs/events.md "Warp level").
#include "flashlab/warps/warps.hpp"

#include <algorithm>

#include "flashlab/executor/action_cost.hpp"
#include "flashlab/executor/event_recorder.hpp"

namespace flashlab {

WarpSlice warp_slice(std::int64_t w, std::int64_t warps, std::int64_t block, std::int64_t n) {
  const std::int64_t lo = w * block / warps, hi = (w + 1) * block / warps;
  const std::int64_t first = lo < n ? lo : n, last = hi < n ? hi : n;
  return WarpSlice{first, last - first};
}

WarpWork& WarpWork::operator+=(const WarpWork& o) {
  flops += o.flops;
  for (int k = 0; k < kOpKindCount; ++k) ops[k] += o.ops[k];
  smem_write += o.smem_write;
  smem_read += o.smem_read;
  barriers += o.barriers;
  return *this;
}

WarpWork& WarpWork::operator*=(std::uint64_t k) {
  flops *= k;
  for (auto& v : ops) v *= k;
  smem_write *= k;
  smem_read *= k;
  barriers *= k;
  return *this;
}

namespace {

constexpr std::uint64_t kPartialBytes = 4;  // reductions stage fp32 partials

std::uint64_t u(std::int64_t v) { return std::uint64_t(v); }

WarpWork from_cost(const Cost& c) {
  WarpWork w;
  w.flops = c.flops;
  w.ops = c.ops;
  return w;
}

// One step's walk: the block-level events in order, with the warp-level events inserted.
class StepWalk {
 public:
  StepWalk(const Problem& p, const StepView& s, WarpEventSink& sink)
      : p_(p), s_(s), sink_(sink), W_(p.warps), d_(p.tiling.d) {
    base_.launch = s.launch;
    base_.block = s.block;
    base_.step = s.step;
    base_.i = std::int32_t(s.i);
    base_.j = std::int32_t(s.j);
    r_ = s.i >= 0 ? p.tiling.rows(s.i) : 0;
    c_ = s.j >= 0 ? p.tiling.cols(s.j) : 0;
    split_k_ = p.split == WarpSplit::split_k && W_ > 1;
  }

  void run() {
    std::vector<Event> block;
    append_block_events(p_, s_, block);
    const bool warp_level = !s_.skip && s_.i >= 0 && s_.level != Level::prologue;
    const bool tile = warp_level && s_.level == Level::inner;
    bool computed = false;
    for (const Event& e : block) {
      if (tile && e.op == Op::compute && !computed) barrier();  // K_j, V_j (V1: Q_i, O_i, l_i, m_i) visible
      if (e.op == Op::compute) computed = true;
      sink_.on_event(e, nullptr);
      if (warp_level && e.op == Op::compute) compute(e.eq);
    }
    if (tile) barrier();  // every warp done with this step's tiles before the next loads
  }

 private:
  WarpSlice rows_of(std::int64_t w) const { return warp_slice(w, W_, p_.tiling.b_r, r_); }
  WarpSlice cols_of(std::int64_t w) const { return warp_slice(w, W_, p_.tiling.b_c, c_); }

  void emit(Op op, Tensor t, Eq eq, std::int64_t w, std::int64_t rows, std::int64_t cols, std::uint64_t bytes,
            const WarpWork& work) {
    Event e = base_;
    e.op = op;
    e.tensor = t;
    e.eq = eq;
    e.warp = std::int16_t(w);
    e.rows = std::uint32_t(rows);
    e.cols = std::uint32_t(cols);
    e.bytes = bytes;
    sink_.on_event(e, &work);
  }

  void barrier() {
    WarpWork one;
    one.barriers = 1;
    for (std::int64_t w = 0; w < W_; ++w) emit(Op::barrier, Tensor::none, Eq::none, w, 0, 0, 0, one);
  }

  void compute(Eq eq) {
    if (row_equation(eq)) return by_rows(eq, eq == Eq::logsumexp ? 1 : d_, [&](std::int64_t rw) {
        // combine: c = splits; convert_dq: c = dQacc's slices
        return from_cost(equation_cost(eq, rw, eq == Eq::combine ? p_.splits : eq == Eq::convert_dq ? p_.dq_splits : 0, d_));
      });
    if (!split_k_) return by_rows(eq, c_, [&](std::int64_t rw) { return from_cost(equation_cost(eq, rw, c_, d_)); });
    switch (eq) {
      case Eq::scores: return split_k_scores();
      case Eq::softmax_v1:
      case Eq::softmax_v2: return split_k_softmax(eq);
      case Eq::output_v1:
      case Eq::output_v2: return split_k_output(eq);
      case Eq::init_grads: case Eq::probs_v1: case Eq::probs_v2: case Eq::grad_v: case Eq::grad_p:
      case Eq::grad_s: case Eq::grad_q: case Eq::grad_k:
        // the backward's tile equations: split by rows whatever the split (docs/warps.md: the warp
        // model of the backward is not written yet; each of them costs per element of the tile)
        return by_rows(eq, c_, [&](std::int64_t rw) { return from_cost(equation_cost(eq, rw, c_, d_)); });
      default: return;
    }
  }

  // One compute event per warp with rows: rows r_w x `cols`.
  template <class WorkOf>
  void by_rows(Eq eq, std::int64_t cols, WorkOf work_of) {
    for (std::int64_t w = 0; w < W_; ++w) {
      const std::int64_t rw = rows_of(w).count;
      if (rw > 0) emit(Op::compute, Tensor::none, eq, w, rw, cols, 0, work_of(rw));
    }
  }

  // S_ij[:, cols_w] = scale · Q_i K_j[cols_w]^T: r x c_w scores per warp.
  void split_k_scores() {
    for (std::int64_t w = 0; w < W_; ++w) {
      const std::int64_t cw = cols_of(w).count;
      if (cw == 0) continue;
      WarpWork k;
      k.flops = 2 * u(r_) * u(cw) * u(d_);
      k.ops[int(OpKind::mul)] = u(r_) * u(cw);
      emit(Op::compute, Tensor::none, Eq::scores, w, r_, cw, 0, k);
    }
  }

  // Every warp writes its r fp32 partials of `t`, all wait, then `readers` read all W partials of
  // their rows. `combine(w, rows)` is the work of reader w on its rows.
  template <class RowsOf, class Combine>
  void reduce(Tensor t, Eq eq, std::int64_t width, RowsOf rows_of_reader, Combine combine) {
    WarpWork wr;
    wr.smem_write = kPartialBytes * u(r_) * u(width);
    for (std::int64_t w = 0; w < W_; ++w) emit(Op::reduce, t, eq, w, r_, width, wr.smem_write, wr);
    barrier();
    for (std::int64_t w = 0; w < W_; ++w) {
      const std::int64_t rows = rows_of_reader(w);
      if (rows == 0) continue;
      WarpWork rd = combine(rows);
      rd.smem_read = kPartialBytes * u(W_) * u(rows) * u(width);
      emit(Op::reduce, t, eq, w, rows, width, rd.smem_read, rd);
    }
  }

  // FA1 Alg. 1 lines 10-11 / FA2 Alg. 1 line 9 with the columns split across warps.
  void split_k_softmax(Eq eq) {
    const std::uint64_t r = u(r_), W = u(W_);
    for (std::int64_t w = 0; w < W_; ++w) {  // on its own columns: partial row max, S - m, exp, partial row sum
      const std::uint64_t cw = u(cols_of(w).count);
      if (cw == 0) continue;
      WarpWork k;
      k.ops[int(OpKind::max)] = r * (cw - 1);
      k.ops[int(OpKind::sub)] = r * cw;
      k.ops[int(OpKind::exp)] = r * cw;
      k.ops[int(OpKind::add)] = r * (cw - 1);
      emit(Op::compute, Tensor::none, eq, w, r_, std::int64_t(cw), 0, k);
    }
    // row max: an all-reduce (every warp needs it for exp); V2 also folds in m_old
    reduce(Tensor::m, eq, 1, [&](std::int64_t) { return r_; }, [&](std::int64_t rows) {
      WarpWork k;
      k.ops[int(OpKind::max)] = (W - 1) * u(rows) + (eq == Eq::softmax_v2 ? u(rows) : 0);
      return k;
    });
    // row sum: to the owners of the rows, who also update m and l per row
    reduce(Tensor::l, eq, 1, [&](std::int64_t w) { return rows_of(w).count; }, [&](std::int64_t rows) {
      const std::uint64_t n = u(rows);
      WarpWork k;
      k.ops[int(OpKind::add)] = (W - 1) * n + n;
      if (eq == Eq::softmax_v2) {  // l_new = e^(m_old - m_new) l_old + rowsum
        k.ops[int(OpKind::sub)] = n;
        k.ops[int(OpKind::exp)] = n;
        k.ops[int(OpKind::mul)] = n;
      } else {  // m_new = max(m, m~); l_new = e^(m - m_new) l + e^(m~ - m_new) l~
        k.ops[int(OpKind::max)] = n;
        k.ops[int(OpKind::sub)] = 2 * n;
        k.ops[int(OpKind::exp)] = 2 * n;
        k.ops[int(OpKind::mul)] = 2 * n;
      }
      return k;
    });
  }

  // FA1 Alg. 1 line 12 / FA2 Alg. 1 line 10: partial P~[:, cols_w] V_j[cols_w] per warp, summed
  // into the owners' rows of O through shared memory, then the line's update of those rows.
  void split_k_output(Eq eq) {
    for (std::int64_t w = 0; w < W_; ++w) {
      const std::int64_t cw = cols_of(w).count;
      if (cw == 0) continue;
      WarpWork k;
      k.flops = 2 * u(r_) * u(cw) * u(d_);
      emit(Op::compute, Tensor::none, eq, w, r_, cw, 0, k);
    }
    reduce(Tensor::O, eq, d_, [&](std::int64_t w) { return rows_of(w).count; }, [&](std::int64_t rows) {
      WarpWork k = from_cost(equation_cost(eq, rows, c_, d_));
      k.flops = 0;  // the matmul is in the partial products above
      k.ops[int(OpKind::add)] += (u(W_) - 1) * u(rows) * u(d_);
      return k;
    });
  }

  const Problem& p_;
  const StepView& s_;
  WarpEventSink& sink_;
  std::int64_t W_, d_, r_ = 0, c_ = 0;
  bool split_k_ = false;
  Event base_;
};

class WorkSum : public WarpEventSink {
 public:
  explicit WorkSum(std::vector<WarpWork>& per_warp) : per_warp_(per_warp) {}
  void on_event(const Event& e, const WarpWork* work) override {
    if (work) per_warp_[std::size_t(e.warp)] += *work;
  }

 private:
  std::vector<WarpWork>& per_warp_;
};

}  // namespace

void walk_step_events(const Problem& p, const StepView& s, WarpEventSink& sink) { StepWalk(p, s, sink).run(); }

std::vector<WarpWork> step_warp_work(const Problem& p, const StepView& s) {
  std::vector<WarpWork> w(std::size_t(p.warps));
  WorkSum sum(w);
  walk_step_events(p, s, sum);
  return w;
}

WarpCounter::WarpCounter(const Problem& p) : p_(p) {}

namespace {

bool same_actions(std::span<const Action> a, const std::vector<Action>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Action& x, const Action& y) {
    return x.op == y.op && x.tensor == y.tensor && x.region == y.region && x.eq == y.eq && x.if_visited == y.if_visited &&
           x.requests == y.requests;
  });
}

}  // namespace

WarpCounter::Kind& WarpCounter::kind_of(const StepView& s) {
  const std::int64_t rows = s.i >= 0 ? p_.tiling.rows(s.i) : -1, cols = s.j >= 0 ? p_.tiling.cols(s.j) : -1;
  const auto matches = [&](const Kind& k) {
    return k.level == s.level && k.skip == s.skip && k.rows == rows && k.cols == cols && same_actions(s.actions, k.actions);
  };
  std::size_t& last = last_[std::size_t(s.level)];
  if (last < kinds_.size() && matches(kinds_[last])) return kinds_[last];
  std::size_t k = 0;
  while (k < kinds_.size() && !matches(kinds_[k])) ++k;
  if (k == kinds_.size())
    kinds_.push_back(Kind{s.level, s.skip, rows, cols, std::vector<Action>(s.actions.begin(), s.actions.end()),
                          step_warp_work(p_, s), 0});
  last = k;
  return kinds_[k];
}

void WarpCounter::on_step(const StepView& s) { ++kind_of(s).steps; }

std::vector<WarpWork> WarpCounter::per_head() const {
  std::vector<WarpWork> sum(std::size_t(p_.warps));
  for (const Kind& k : kinds_)
    for (std::size_t w = 0; w < sum.size(); ++w) {
      WarpWork one = k.work[w];
      one *= k.steps;
      sum[w] += one;
    }
  return sum;
}

std::vector<WarpWork> WarpCounter::totals() const {
  std::vector<WarpWork> t = per_head();
  for (WarpWork& w : t) w *= std::uint64_t(p_.bh());
  return t;
}

}  // namespace flashlab
