// numerics.cpp — numerics as a StepObserver (numerics.hpp: NumericsObserver, simulate()): every
// action of a step moves or computes real tiles.
//
// Loads copy a region of an HBM tensor into its SRAM buffer, compute actions run the Eq they
// name (tile_math.hpp), stores copy back — O rounded to the input dtype at every store (V1's
// HBM round trips show up in its error), S and P rounded too (standard attention), the
// statistics m, l, L kept in fp32. HBM outputs start as NaN, so a row the schedule never writes
// is visible as NaN in the result.
#include <limits>
#include <stdexcept>
#include <string>

#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "grad_steps.hpp"
#include "hbm_rows.hpp"
#include "tile_math.hpp"

namespace flashlab {
namespace {

using numerics_detail::action_rows;
using numerics_detail::Rows;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

void require_shape(const char* field, const MatrixF& x, std::int64_t rows, std::int64_t cols) {
  if (x.rows() != rows || x.cols() != cols)
    throw ConfigError(field, std::to_string(x.rows()) + " x " + std::to_string(x.cols()),
                      "a matrix of " + std::to_string(rows) + " x " + std::to_string(cols) + " (the problem's shape)");
}

// Where the schedule keeps m and l of a Q block between steps, read off its data: in HBM when a
// launch stores m (the K/V outer order, FA1 Alg. 1 line 13), on chip while the Q block's steps
// run when a launch walks tiles without storing m (the Q outer order, FA2 Alg. 1: the Q block's
// own thread block, or the one thread block per head while it is at that Q block), else as
// whole-matrix row statistics of the softmax (standard attention).
enum class StatsHome : std::uint8_t { q_block_chip, hbm, whole };

StatsHome stats_home(const Schedule& s) {
  if (moves(s, Tensor::m)) return StatsHome::hbm;
  return has_tiles(s) ? StatsHome::q_block_chip : StatsHome::whole;
}

}  // namespace

struct NumericsObserver::State {
  Problem p;
  const Inputs& in;
  NumericsOptions opt;
  StatsHome home;
  tile_math::Chip chip;
  std::int64_t block = -1, q_block = -1;  // thread block and Q block the chip holds O_i, m_i, l_i of
  bool dense_stats = false;    // standard attention: m, l computed (after its softmax step)
  MatrixF hbm_O;               // (N_q, d), at the input dtype
  Eigen::VectorXf hbm_L, hbm_l, hbm_m;  // (N_q) each, fp32
  MatrixF hbm_S, hbm_P;        // (N_q, N_k), standard attention only
  std::vector<MatrixF> hbm_Oacc;  // split-KV: one (N_q, d) partial O per split, fp32
  MatrixF hbm_Lacc;               // (N_q, splits): the splits' partial L, fp32
  std::vector<MatrixF> parts_O;   // the combine's Oacc_i of every split, on chip
  MatrixF parts_L;                // its Lacc_i, (rows, splits)
  std::vector<std::vector<StatSnapshot>> traces;
  // The backward's launches (p.backward()): from launch `backward_from` on, steps go to `grad`,
  // made from the forward's HBM tensors when the first of them arrives.
  std::size_t backward_from = 0;
  std::unique_ptr<GradSteps> grad;

  State(const Problem& p_, const Schedule& forward, const Inputs& in_, NumericsOptions o)
      : p(p_), in(in_), opt(std::move(o)), home(stats_home(forward)), traces(opt.trace_blocks.size()) {
    backward_from = p.backward() ? (p.forward() ? make_schedule(p.forward_only()).launches.size() : 0) : std::size_t(-1);
    const Tiling& t = p.tiling;
    hbm_O.setConstant(t.n_q, t.d, kNaN);
    hbm_L.setConstant(t.n_q, kNaN);
    hbm_l.setConstant(t.n_q, kNaN);
    hbm_m.setConstant(t.n_q, kNaN);
    if (p.splits > 1) {
      hbm_Oacc.assign(std::size_t(p.splits), MatrixF::Constant(t.n_q, t.d, kNaN));
      hbm_Lacc.setConstant(t.n_q, p.splits, kNaN);
    }
  }

  void load(const Action& a, const StepView& s) {
    const Rows r = action_rows(p, a, s);
    tile_math::Chip& c = chip;
    switch (a.tensor) {
      case Tensor::Q: c.r0 = r.first; c.sram_Qi = in.Q.middleRows(r.first, r.count); break;
      case Tensor::K: c.c0 = r.first; c.sram_Kj = in.K.middleRows(r.first, r.count); break;
      case Tensor::V: c.sram_Vj = in.V.middleRows(r.first, r.count); break;
      case Tensor::O: c.sram_O = hbm_O.middleRows(r.first, r.count); break;
      case Tensor::l: c.l = hbm_l.segment(r.first, r.count); break;
      case Tensor::m: c.m = hbm_m.segment(r.first, r.count); break;
      case Tensor::L: c.L = hbm_L.segment(r.first, r.count); break;
      case Tensor::Oacc:  // the combine: Q block i of every split
        parts_O.resize(hbm_Oacc.size());
        for (std::size_t x = 0; x < hbm_Oacc.size(); ++x) parts_O[x] = hbm_Oacc[x].middleRows(r.first, r.count);
        break;
      case Tensor::Lacc: parts_L = hbm_Lacc.middleRows(r.first, r.count); break;
      case Tensor::S:
      case Tensor::P:  // P takes S's place on chip; both are the whole (N_q, N_k) matrix here
        c.sram_S = a.tensor == Tensor::S ? hbm_S : hbm_P;
        c.r0 = c.c0 = 0;
        tile_math::set_visible(c, p.band, p.mask.kind == MaskKind::none);
        break;
      default: throw std::logic_error("numerics: a forward launch loads " + std::string(to_string(a.tensor)));
    }
  }

  void store(const Action& a, const StepView& s) {
    const Rows r = action_rows(p, a, s);
    const tile_math::Chip& c = chip;
    switch (a.tensor) {
      case Tensor::O:
        hbm_O.middleRows(r.first, r.count) = c.sram_O;
        round_to_dtype(p.dtype, hbm_O.middleRows(r.first, r.count));
        break;
      case Tensor::l: hbm_l.segment(r.first, r.count) = c.l; break;
      case Tensor::m: hbm_m.segment(r.first, r.count) = c.m; break;
      case Tensor::L: hbm_L.segment(r.first, r.count) = c.L; break;
      case Tensor::Oacc: hbm_Oacc[std::size_t(s.split)].middleRows(r.first, r.count) = c.sram_O; break;  // fp32
      case Tensor::Lacc:
        // a split that visited no tile never ran finalize_split: its rows have l = 0, L_s = -inf
        for (std::int64_t k = 0; k < r.count; ++k)
          hbm_Lacc(r.first + k, s.split) = c.l(k) > 0 ? c.L(k) : -std::numeric_limits<float>::infinity();
        break;
      case Tensor::S: hbm_S = c.sram_S; round_to_dtype(p.dtype, hbm_S); break;
      case Tensor::P: hbm_P = c.sram_S; round_to_dtype(p.dtype, hbm_P); break;
      default: throw std::logic_error("numerics: a forward launch stores only O, l, m, L, S, P, Oacc or Lacc");
    }
  }

  // A schedule written by hand may compute before it loads: each equation's operands must be on
  // chip with the shapes of the step's tile (rows(i), cols(j), d), or the step is refused.
  void check_operands(Eq eq, const StepView& s) const {
    if (s.i < 0) return;  // whole-matrix steps (standard attention): the schedule's own
    const Tiling& t = p.tiling;
    const tile_math::Chip& c = chip;
    const std::int64_t r = t.rows(s.i), cols = s.j >= 0 ? t.cols(s.j) : 0, d = t.d;
    const auto need = [&](bool ok, const char* what) {
      if (!ok) throw std::logic_error(std::string(to_string(eq)) + " needs " + what);
    };
    const bool stats = c.m.size() == r && c.l.size() == r;
    switch (eq) {
      case Eq::scores:
        need(s.j >= 0 && c.sram_Qi.rows() == r && c.sram_Qi.cols() == d && c.sram_Kj.rows() == cols,
             "Q_i and K_j on chip (load them first) on a tile (i, j)");
        break;
      case Eq::softmax_v1: case Eq::softmax_v2:
        need(c.sram_S.rows() == r && c.sram_S.cols() == cols && stats, "S_ij (scores first) and m_i, l_i of its rows");
        break;
      case Eq::output_v1: case Eq::output_v2:
        need(c.sram_S.rows() == r && c.sram_S.cols() == cols && c.sram_Vj.rows() == cols && c.sram_O.rows() == r &&
                 c.sram_O.cols() == d && stats,
             "P~_ij (softmax first), V_j on chip and O_i, m_i, l_i of its rows");
        break;
      case Eq::finalize_v2: case Eq::finalize_split:
        need(c.sram_O.rows() == r && stats, "O_i, m_i and l_i of Q block i on chip");
        break;
      case Eq::normalize: need(c.sram_O.rows() == r && c.l.size() == r, "O_i and l_i of Q block i on chip"); break;
      case Eq::logsumexp: need(stats, "m_i and l_i of Q block i on chip"); break;
      default: break;
    }
  }

  void compute(const Action& a, const StepView& s) {
    using namespace tile_math;
    const Tiling& t = p.tiling;
    check_operands(a.eq, s);
    switch (a.eq) {
      case Eq::none: break;
      case Eq::init_stats: init_stats(chip, s.i >= 0 ? t.rows(s.i) : t.n_q, t.d); break;
      case Eq::scores: {
        // a tile's class decides whether it needs the mask; standard attention has no tiles
        const bool full = s.level == Level::inner ? s.cls == TileClass::full : p.mask.kind == MaskKind::none;
        scores(chip, p.scale, p.band, full);
        break;
      }
      case Eq::softmax_v1: softmax_v1(chip); break;
      case Eq::output_v1: output_v1(chip, p.dtype); break;
      case Eq::softmax_v2: softmax_v2(chip); break;
      case Eq::output_v2: output_v2(chip, p.dtype); break;
      case Eq::finalize_v2: finalize_v2(chip); break;
      case Eq::softmax_dense: softmax_dense(chip); dense_stats = true; break;
      case Eq::output_dense: output_dense(chip); break;
      case Eq::normalize: normalize(chip); break;
      case Eq::logsumexp: chip.L = logsumexp(chip.m, chip.l); break;
      case Eq::finalize_split: finalize_split(chip); break;
      case Eq::combine: {
        Merged m = merge_splits(parts_O, parts_L);
        chip.sram_O = std::move(m.O);
        chip.L = std::move(m.L);
        break;
      }
      default: throw std::logic_error("numerics: a forward launch computes " + std::string(to_string(a.eq)));
    }
  }

  // m, l of each traced Q block after step s, where the algorithm has them (NumericsOptions).
  void trace(const StepView& s) {
    const Tiling& t = p.tiling;
    for (std::size_t k = 0; k < opt.trace_blocks.size(); ++k) {
      const std::int64_t b = opt.trace_blocks[k];
      std::int64_t offset = b * t.b_r;  // where block b's rows start in the vectors below
      const Eigen::VectorXf* m = &chip.m;
      const Eigen::VectorXf* l = &chip.l;
      switch (home) {
        case StatsHome::q_block_chip:  // Q outer order: on chip, while the Q block's steps run
          if (s.i != b || (p.splits > 1 && s.split < 0)) continue;  // (not in split-KV's combine)
          offset = 0;
          break;
        case StatsHome::hbm:  // V1: HBM, after line 2 and after each tile (b, j)
          if (s.i != b && s.level != Level::prologue) continue;
          m = &hbm_m;
          l = &hbm_l;
          break;
        case StatsHome::whole:  // standard: rowmax and rowsum of S, from its softmax step on
          if (!dense_stats) continue;
          break;
      }
      const std::int64_t n = t.rows(b);
      StatSnapshot snap{s.step, s.j, s.skip, std::vector<float>(m->data() + offset, m->data() + offset + n),
                        std::vector<float>(l->data() + offset, l->data() + offset + n)};
      traces[k].push_back(std::move(snap));
    }
  }
};

NumericsObserver::NumericsObserver(const Problem& p, const Inputs& in, NumericsOptions opt)
    : NumericsObserver(p, make_schedule(p.forward_only()), in, std::move(opt)) {}

NumericsObserver::NumericsObserver(const Problem& p, const Schedule& forward, const Inputs& in, NumericsOptions opt) {
  const Tiling& t = p.tiling;
  require_shape("inputs.Q", in.Q, t.n_q, t.d);
  require_shape("inputs.K", in.K, t.n_k, t.d);
  require_shape("inputs.V", in.V, t.n_k, t.d);
  if (p.backward()) require_shape("inputs.dO", in.dO, t.n_q, t.d);
  for (std::int64_t b : opt.trace_blocks)
    if (b < 0 || b >= t.t_r())
      throw ConfigError("trace block", std::to_string(b),
                        "a Q block index from 0 to T_r - 1 = " + std::to_string(t.t_r() - 1));
  st_ = std::make_unique<State>(p, forward, in, std::move(opt));
}

NumericsObserver::~NumericsObserver() = default;

void NumericsObserver::on_step(const StepView& s) {
  State& st = *st_;
  if (s.launch >= st.backward_from) {
    if (!st.grad) st.grad = std::make_unique<GradSteps>(st.p, st.in, forward_hbm());
    st.grad->on_step(s);
    return;
  }
  if (st.home == StatsHome::q_block_chip && s.i >= 0 && (std::int64_t(s.block) != st.block || s.i != st.q_block)) {
    // A fresh Q block on chip: O = 0, m = -inf, l = 0, L = +inf — what a block that visits no
    // tile writes (FA2's convention for rows with no visible key).
    st.block = s.block;
    st.q_block = s.i;
    tile_math::init_stats(st.chip, st.p.tiling.rows(s.i), st.p.tiling.d);
  }
  // A deferred action (V3's GEMM1 under intra-warpgroup overlap) is its tile's work, issued later:
  // it takes effect after the step's other actions, as the algorithm's line order has it.
  for (const bool deferred : {false, true})
    for (const Action& a : s.actions) {
      if (a.deferred != deferred) continue;
      switch (a.op) {
        case Op::load: st.load(a, s); break;
        case Op::store: st.store(a, s); break;
        case Op::compute: st.compute(a, s); break;
        case Op::skip: case Op::barrier: case Op::reduce: break;  // no data changes
        case Op::arrive: case Op::wait: case Op::commit: break;   // V3's synchronisation
        case Op::atomic:  // the backward's dQacc_i += dS_ij K_j (grad_steps.cpp); simulate() names the step
          throw std::logic_error("numerics: a forward launch has no atomic (" + std::string(to_string(a.tensor)) + ")");
      }
    }
  st.trace(s);
}

NumericResult NumericsObserver::result() const {
  const State& st = *st_;
  NumericResult r;
  r.O = st.hbm_O;
  switch (st.home) {
    case StatsHome::q_block_chip: r.L = st.hbm_L; break;                                  // saved L
    case StatsHome::hbm: r.L = tile_math::logsumexp(st.hbm_m, st.hbm_l); break;           // from m, l
    case StatsHome::whole:
      r.L = st.dense_stats ? st.chip.L : Eigen::VectorXf::Constant(st.p.tiling.n_q, kNaN);
      break;
  }
  r.traces = st.traces;
  if (st.grad) st.grad->fill(r);
  return r;
}

ForwardHbm NumericsObserver::forward_hbm() const {
  const State& st = *st_;
  return {st.hbm_O, st.hbm_L, st.hbm_m, st.hbm_l, st.hbm_P};
}

NumericResult simulate(const Problem& p, const Schedule& s, const Inputs& in, const NumericsOptions& opt) {
  if (p.pass != Pass::forward)
    throw ConfigError("pass", std::string(to_string(p.pass)), "forward: a schedule written by hand runs the forward's numerics");
  NumericsObserver numerics(p, s, in, opt);
  Executor e(p, s);
  e.add_observer(&numerics);
  try {
    e.run();
  } catch (const std::logic_error& x) {  // a step the forward's numerics cannot run
    throw ConfigError("schedule", "a step at launch " + std::to_string(e.last().launch) + ", block " +
                                      std::to_string(e.last().block) + ", step " + std::to_string(e.last().step),
                      std::string("a forward's loads, stores and equations (") + x.what() + ")");
  }
  return numerics.result();
}

NumericResult simulate(const Problem& p, const Inputs& in, const NumericsOptions& opt, StepObserver* also) {
  if (p.pass != Pass::backward) {
    NumericsObserver numerics(p, in, opt);
    Executor e(p);
    e.add_observer(&numerics);
    if (also) e.add_observer(also);
    e.run();
    return numerics.result();
  }
  // The backward alone: the forward runs first, as a training step's would, for O and its
  // statistics in HBM; then the backward's launches, from launch 0.
  Problem forward = p;
  forward.pass = Pass::forward;
  NumericsObserver first(forward, in, opt);
  Executor ef(forward);
  ef.add_observer(&first);
  ef.run();
  NumericResult r = first.result();
  NumericsObserver second(p, in, {});
  second.st_->grad = std::make_unique<GradSteps>(p, in, first.forward_hbm());
  Executor eb(p);
  eb.add_observer(&second);
  if (also) eb.add_observer(also);
  eb.run();
  second.st_->grad->fill(r);
  return r;
}

}  // namespace flashlab
