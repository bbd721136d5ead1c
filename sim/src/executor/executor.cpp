// executor.cpp — the one walk of a schedule (see executor.hpp).
#include "flashlab/executor/executor.hpp"

#include <algorithm>

#include "flashlab/executor/action_cost.hpp"

namespace flashlab {
namespace {

void split_outer(const std::vector<Action>& all, std::vector<Action>& visited, std::vector<Action>& empty) {
  for (const Action& a : all) {
    visited.push_back(a);
    if (!a.if_visited) empty.push_back(a);
  }
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

Executor::Executor(const Problem& p, ExecOptions opt) : p_(p), s_(make_schedule(p)), opt_(opt) {
  split_outer(s_.outer_begin, begin_visited_, begin_empty_);
  split_outer(s_.outer_end, end_visited_, end_empty_);
  const Tiling& t = p_.tiling;
  if (s_.order == LoopOrder::q_outer) {
    n_outer_ = t.t_r();
    n_inner_ = t.t_c();
  } else if (s_.order == LoopOrder::kv_outer) {
    n_outer_ = t.t_c();
    n_inner_ = t.t_r();
  }
  if (opt_.tile_stats && s_.order != LoopOrder::none) tiles_.assign(std::size_t(t.t_r() * t.t_c()), TileStat{});
  if (s_.order == LoopOrder::none) {
    // Standard attention has no tile loop; it computes every tile of S (the mask is applied
    // element-wise), so every tile counts as visited.
    tiles_count_.total = tiles_count_.visited = std::uint64_t(t.t_r() * t.t_c());
    for (std::int64_t i = 0; i < t.t_r(); ++i)
      for (std::int64_t j = 0; j < t.t_c(); ++j) {
        const TileClass c = tile_class(t, p_.band, i, j);
        (c == TileClass::full ? tiles_count_.full : c == TileClass::partial ? tiles_count_.partial
                                                                             : tiles_count_.skipped)++;
      }
    sram_peak_ = sram_tile_bytes(p_.algo, std::min(t.b_r, t.n_q), std::min(t.b_c, t.n_k), t.d, p_.e_in);
  }
}

Cost Executor::sum_cost(std::span<const Action> acts, std::int64_t i, std::int64_t j) const {
  Cost c;
  for (const Action& a : acts) c += action_cost(p_, a, i, j);
  return c;
}

const Cost& Executor::memo_cost(Memo& m, std::span<const Action> acts, std::int64_t i, std::int64_t j) {
  if (!m.ready) {
    m.cost = sum_cost(acts, i, j);
    m.ready = true;
  }
  return m.cost;
}

bool Executor::outer_visits(std::int64_t o) const {
  if (!p_.block_skip) return true;
  const BlockRange r = s_.order == LoopOrder::q_outer ? visible_col_blocks(p_.tiling, p_.band, o)
                                                      : visible_row_blocks(p_.tiling, p_.band, o);
  return !r.empty();
}

void Executor::emit(Level level, std::int64_t i, std::int64_t j, std::span<const Action> acts, const Cost& c,
                    bool skip, TileClass cls) {
  cost_ += c;
  ++steps_;
  view_.block = block_;
  view_.step = next_step_++;
  view_.level = level;
  view_.i = i;
  view_.j = j;
  view_.skip = skip;
  view_.cls = cls;
  view_.actions = acts;
  view_.cost = &c;
  for (StepObserver* o : observers_) o->on_step(view_);
}

bool Executor::step() {
  const Tiling& t = p_.tiling;
  for (;;) {
    switch (phase_) {
      case Phase::prologue:
        if (pro_ < s_.prologue.size()) {
          const auto& acts = s_.prologue[pro_++];
          scratch_ = sum_cost(acts, -1, -1);
          emit(Level::prologue, -1, -1, acts, scratch_, false, TileClass::full);
          return true;
        }
        phase_ = s_.order == LoopOrder::none ? Phase::epilogue : Phase::outer_begin;
        break;

      case Phase::outer_begin: {
        if (o_ >= n_outer_) {
          phase_ = Phase::epilogue;
          break;
        }
        if (s_.order == LoopOrder::q_outer) {  // one thread block per Q block
          block_ = std::uint32_t(o_);
          next_step_ = 0;
        }
        outer_visited_ = outer_visits(o_);
        phase_ = Phase::inner;
        k_ = 0;
        const auto& acts = outer_visited_ ? begin_visited_ : begin_empty_;
        if (acts.empty()) break;
        const bool q = s_.order == LoopOrder::q_outer;
        const std::int64_t i = q ? o_ : -1, j = q ? -1 : o_;
        const bool last = o_ == n_outer_ - 1;
        const Cost& c = memo_cost(begin_memo_[(last ? 1 : 0) + (outer_visited_ ? 2 : 0)], acts, i, j);
        if (q) resident_ = Resident{o_, -1, false, 0};
        else resident_ = Resident{-1, o_, false, 0};
        resident_.bytes = q ? t.rows(o_) * t.d * p_.e_in : 2 * t.cols(o_) * t.d * p_.e_in;
        emit(Level::outer_begin, i, j, acts, c, false, TileClass::full);
        return true;
      }

      case Phase::inner: {
        if (k_ >= n_inner_) {
          phase_ = Phase::outer_end;
          break;
        }
        const bool q = s_.order == LoopOrder::q_outer;
        const std::int64_t i = q ? o_ : k_, j = q ? k_ : o_;
        ++k_;
        const TileClass cls = tile_class(t, p_.band, i, j);
        ++tiles_count_.total;
        (cls == TileClass::full ? tiles_count_.full : cls == TileClass::partial ? tiles_count_.partial
                                                                                 : tiles_count_.skipped)++;
        const bool visit = !p_.block_skip || cls != TileClass::skipped;
        TileStat* ts = tiles_.empty() ? nullptr : &tiles_[std::size_t(i * t.t_c() + j)];
        if (ts) ts->cls = cls;
        if (!visit) {
          static const Cost kZero{};
          emit(Level::inner, i, j, {}, kZero, true, cls);
          return true;
        }
        ++tiles_count_.visited;
        if (ts) ts->visit = visits_;
        ++visits_;
        const int key = (i == t.t_r() - 1 ? 1 : 0) + (j == t.t_c() - 1 ? 2 : 0);
        const Cost& c = memo_cost(inner_memo_[key], s_.inner, i, j);
        resident_ = Resident{i, j, true, sram_tile_bytes(p_.algo, t.rows(i), t.cols(j), t.d, p_.e_in)};
        sram_peak_ = std::max(sram_peak_, resident_.bytes);
        emit(Level::inner, i, j, s_.inner, c, false, cls);
        return true;
      }

      case Phase::outer_end: {
        const auto& acts = outer_visited_ ? end_visited_ : end_empty_;
        const std::int64_t o = o_++;
        phase_ = Phase::outer_begin;
        if (acts.empty()) break;
        const bool q = s_.order == LoopOrder::q_outer;
        const std::int64_t i = q ? o : -1, j = q ? -1 : o;
        const bool last = o == n_outer_ - 1;
        const Cost& c = memo_cost(end_memo_[(last ? 1 : 0) + (outer_visited_ ? 2 : 0)], acts, i, j);
        resident_ = Resident{};
        emit(Level::outer_end, i, j, acts, c, false, TileClass::full);
        return true;
      }

      case Phase::epilogue:
        if (epi_ < s_.epilogue.size()) {
          const auto& acts = s_.epilogue[epi_++];
          scratch_ = sum_cost(acts, -1, -1);
          emit(Level::epilogue, -1, -1, acts, scratch_, false, TileClass::full);
          return true;
        }
        phase_ = Phase::done;
        resident_ = Resident{};
        break;

      case Phase::done:
        return false;
    }
  }
}

void Executor::run() {
  while (step()) {
  }
}

Cost Executor::tile_cost(std::int64_t i, std::int64_t j) const {
  if (s_.order == LoopOrder::none) return {};
  const TileClass cls = tile_class(p_.tiling, p_.band, i, j);
  if (p_.block_skip && cls == TileClass::skipped) return {};
  return sum_cost(s_.inner, i, j);
}

Counters Executor::counters() const {
  Counters c;
  const auto bh = std::uint64_t(p_.bh());
  c.cost = cost_;
  c.cost *= bh;
  c.tiles = tiles_count_;
  for (std::uint64_t* v : {&c.tiles.total, &c.tiles.visited, &c.tiles.full, &c.tiles.partial, &c.tiles.skipped})
    *v *= bh;
  c.sram_peak_bytes = sram_peak_;
  c.sram_capacity = p_.sram_capacity;
  const Tiling& t = p_.tiling;
  switch (p_.algo) {
    case Algo::standard: c.grid_blocks = t.t_r() * t.t_c() * p_.bh(); break;  // the S = QK^T kernel
    case Algo::v1: c.grid_blocks = p_.bh(); break;                             // one block per head
    case Algo::v2: c.grid_blocks = t.t_r() * p_.bh(); break;                   // one block per Q block
  }
  const GpuSpec& g = p_.gpu;
  std::int64_t per_sm = std::min<std::int64_t>(g.max_blocks_per_sm, g.max_warps_per_sm / p_.warps);
  if (sram_peak_ > 0) per_sm = std::min<std::int64_t>(per_sm, g.smem_per_sm / sram_peak_);
  c.blocks_per_sm = per_sm;
  c.waves = per_sm > 0 ? ceil_div(c.grid_blocks, g.sms * per_sm) : 0;
  c.steps = steps_;
  return c;
}

Counters count(const Problem& p) {
  Executor e(p);
  e.run();
  return e.counters();
}

}  // namespace flashlab
