// executor.cpp — the one walk of a schedule (see executor.hpp).
#include "flashlab/executor/executor.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>

#include "flashlab/executor/action_cost.hpp"
#include "flashlab/memory/occupancy.hpp"

namespace flashlab {
namespace {

void split_outer(const std::vector<Action>& all, std::vector<Action>& visited, std::vector<Action>& empty) {
  for (const Action& a : all) {
    visited.push_back(a);
    if (!a.if_visited) empty.push_back(a);
  }
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

void count_class(TileCounts& c, TileClass cls) {
  (cls == TileClass::full ? c.full : cls == TileClass::partial ? c.partial : c.skipped)++;
}

}  // namespace

Executor::Executor(const Problem& p, ExecOptions opt) : Executor(p, make_schedule(p), opt) {}

Executor::Executor(const Problem& p, Schedule s, ExecOptions opt) : p_(p), s_(std::move(s)), opt_(opt) {
  check_schedule(s_);
  plan();
  start_launch();
}

void Executor::plan() {
  const Tiling& t = p_.tiling;
  plans_.resize(s_.launches.size());
  launch_cost_.assign(s_.launches.size(), Cost{});
  for (std::size_t k = 0; k < s_.launches.size(); ++k) {
    const Launch& l = s_.launches[k];
    Plan& w = plans_[k];
    w.launch = &l;
    const std::vector<Loop> walked = walked_loops(l);
    w.depth = int(walked.size());
    for (int lv = 0; lv < w.depth; ++lv) {
      w.dim[lv] = walked[std::size_t(lv)].dim;
      w.descending[lv] = walked[std::size_t(lv)].order == Order::descending;
      w.n[lv] = loop_extent(w.dim[lv], p_);
    }
    // Block numbers: the thread-block loops other than batch and head, the last one fastest
    // (blockIdx.x), each weighted by the extents of the faster ones.
    std::int64_t weight = 1;
    for (auto it = l.loops.rbegin(); it != l.loops.rend(); ++it) {
      if (!it->thread_block || it->dim == Dim::batch || it->dim == Dim::head) continue;
      for (int lv = 0; lv < w.depth; ++lv)
        if (w.dim[lv] == it->dim) w.stride[lv] = weight;
      if (partitions_kv_blocks(it->dim)) {
        w.split_dim = it->dim;
        w.splits = loop_extent(it->dim, p_);
        w.split_stride = weight;
        for (int lv = 0; lv < w.depth; ++lv)
          if (w.dim[lv] == Dim::kv_block) w.split_level = lv;
      }
      weight *= loop_extent(it->dim, p_);
    }
    if (l.persistent) {
      if (p_.gpu.sms < 1)
        throw std::logic_error("launch " + l.name + " is persistent: it needs the GPU's SM count (gpu.sms >= 1)");
      w.ctas = p_.gpu.sms;
    }
    w.counts_tiles = !l.body.empty() && std::none_of(plans_.begin(), plans_.begin() + std::ptrdiff_t(k),
                                                        [](const Plan& x) { return x.counts_tiles; });
    split_outer(l.outer_begin, w.begin_visited, w.begin_empty);
    std::copy_if(l.body.begin(), l.body.end(), std::back_inserter(w.deferred), [](const Action& a) { return a.deferred; });
    split_outer(l.outer_end, w.end_visited, w.end_empty);
    // A launch that walks no tiles holds full tiles (its kernel's thread block, tile (0, 0)).
    if (w.depth == 0) w.sram_peak = sram_bytes(l, std::min(t.b_r, t.n_q), std::min(t.b_c, t.n_k), t.d, p_.e_in);
  }
  if (!has_tiles(s_)) {
    // No launch walks tiles (standard attention): S is computed whole (the mask is applied
    // element-wise), so every tile counts as visited.
    tiles_count_.total = tiles_count_.visited = std::uint64_t(t.t_r() * t.t_c());
    for (std::int64_t i = 0; i < t.t_r(); ++i)
      for (std::int64_t j = 0; j < t.t_c(); ++j) count_class(tiles_count_, tile_class(t, p_.band, i, j));
  } else if (opt_.tile_stats) {
    tiles_.assign(std::size_t(t.t_r() * t.t_c()), TileStat{});
  }
}

void Executor::enter_split(const Plan& w, std::int64_t s) {
  sp_ = s;
  split_ = partition_range(p_, w.split_dim, s);
}

void Executor::start_launch() {
  phase_ = Phase::prologue;
  pro_ = 0;
  o_ = k_ = 0;
  enter_split(plans_[launch_], 0);
  block_ = dispatch_ = 0;  // the prologue's block, and the first one dispatched
  ring_ = work_ = 0;
  walked_.clear();
  const auto it = carried_.find(0);
  next_step_ = it == carried_.end() ? 0 : it->second;
}

void Executor::enter_block(std::uint32_t dispatch) {
  const std::int64_t ctas = plans_[launch_].ctas;
  dispatch_ = dispatch;
  const std::uint32_t block = ctas > 0 ? std::uint32_t(dispatch % ctas) : dispatch;
  if (block == block_) return;
  if (launch_ + 1 < plans_.size() || ctas > 0) carried_[block_] = next_step_;
  if (ctas > 0) walked_[block_] = {ring_, work_};
  block_ = block;
  const auto it = carried_.find(block);
  next_step_ = it == carried_.end() ? 0 : it->second;
  const auto at = walked_.find(block);
  const Walked left = at == walked_.end() ? Walked{} : at->second;
  ring_ = left.ring;
  work_ = left.work;
}

Cost Executor::sum_cost(std::span<const Action> acts, std::int64_t i, std::int64_t j) const {
  Cost c;
  for (const Action& a : acts) c += action_cost(p_, a, i, j);
  return c;
}

const Executor::Memo& Executor::memo(const Plan& w, Memo& m, std::span<const Action> acts, std::int64_t i,
                                     std::int64_t j) const {
  if (!m.ready) {
    m.cost = sum_cost(acts, i, j);
    const Resident r = resident_at(w, i, j);
    m.sram = r.bytes;
    m.scores = r.scores;
    m.ready = true;
  }
  return m;
}

bool Executor::outer_visits(const Plan& w, Dim d, std::int64_t index) const {
  if (w.splits > 0 && split_.count() == 0) return false;  // a split past the last K/V block
  if (!p_.block_skip) return true;
  const BlockRange r = d == Dim::q_block ? visible_col_blocks(p_.tiling, p_.band, index)
                                         : visible_row_blocks(p_.tiling, p_.band, index);
  if (w.splits > 0 && w.split_level == 1) return std::max(r.first, split_.first) < std::min(r.last + 1, split_.end);
  return !r.empty();
}

Resident Executor::resident_at(const Plan& w, std::int64_t i, std::int64_t j) const {
  const Tiling& t = p_.tiling;
  const Launch& l = *w.launch;
  Resident r{i, j, false, 0};
  r.scores = i >= 0 && j >= 0 && (placement_of(l, Tensor::S) == Memory::sram || placement_of(l, Tensor::P) == Memory::sram);
  r.bytes = sram_bytes(l, i >= 0 ? t.rows(i) : 0, j >= 0 ? t.cols(j) : 0, t.d, p_.e_in);
  return r;
}

void Executor::emit(Level level, std::int64_t i, std::int64_t j, std::span<const Action> acts, const Cost& c,
                    bool skip, TileClass cls) {
  launch_cost_[launch_] += c;
  ++steps_;
  view_.block = block_;
  view_.dispatch = dispatch_;
  view_.step = next_step_++;
  view_.launch = std::uint16_t(launch_);
  view_.level = level;
  view_.i = i;
  view_.j = j;
  view_.split = plans_[launch_].splits > 0 ? sp_ : -1;
  view_.skip = skip;
  view_.cls = cls;
  view_.actions = acts;
  view_.cost = &c;
  view_.ring = ring_;
  view_.work = work_;
  view_.prev_j = level == Level::outer_begin || level == Level::prologue ? -1 : prev_visited_;
  view_.deferred = plans_[launch_].deferred;
  for (StepObserver* o : observers_) o->on_step(view_);
}

bool Executor::prologue_step(Plan& w) {
  if (pro_ < w.launch->prologue.size()) {
    const auto& acts = w.launch->prologue[pro_++];
    scratch_ = sum_cost(acts, -1, -1);
    emit(Level::prologue, -1, -1, acts, scratch_, false, TileClass::full);
    return true;
  }
  phase_ = w.depth > 0 ? Phase::outer_begin : Phase::next_launch;
  return false;
}

bool Executor::outer_begin_step(Plan& w) {
  if (o_ >= extent_of(w, 0)) {
    if (sp_ + 1 < w.splits) {  // the next split walks the Q blocks again
      enter_split(w, sp_ + 1);
      o_ = 0;
      return false;
    }
    phase_ = Phase::next_launch;
    return false;
  }
  if (w.stride[0] > 0 || w.splits > 0) enter_block(std::uint32_t(sp_ * w.split_stride + o_ * w.stride[0]));
  outer_index_ = index_of(w, 0, o_);
  outer_visited_ = outer_visits(w, w.dim[0], outer_index_);
  prev_visited_ = -1;
  phase_ = w.depth == 2 ? Phase::inner : Phase::outer_end;
  k_ = 0;
  const auto& acts = outer_visited_ ? w.begin_visited : w.begin_empty;
  if (acts.empty()) return false;
  const bool q = w.dim[0] == Dim::q_block;
  const std::int64_t i = q ? outer_index_ : -1, j = q ? -1 : outer_index_;
  const bool last = outer_index_ == w.n[0] - 1;
  const Memo& m = memo(w, w.begin_memo[(last ? 1 : 0) + (outer_visited_ ? 2 : 0)], acts, i, j);
  resident_ = Resident{i, j, m.scores, m.sram};
  w.sram_peak = std::max(w.sram_peak, resident_.bytes);
  emit(Level::outer_begin, i, j, acts, m.cost, false, TileClass::full);
  return true;
}

bool Executor::inner_step(Plan& w) {
  const Tiling& t = p_.tiling;
  if (k_ >= extent_of(w, 1)) {
    phase_ = Phase::outer_end;
    return false;
  }
  if (w.stride[1] > 0) enter_block(std::uint32_t(o_ * w.stride[0] + k_ * w.stride[1]));
  const std::int64_t inner_index = index_of(w, 1, k_);
  const bool q = w.dim[0] == Dim::q_block;
  const std::int64_t i = q ? outer_index_ : inner_index, j = q ? inner_index : outer_index_;
  ++k_;
  const TileClass cls = tile_class(t, p_.band, i, j);
  const bool visit = !p_.block_skip || cls != TileClass::skipped;
  if (w.counts_tiles) {
    ++tiles_count_.total;
    count_class(tiles_count_, cls);
  }
  TileStat* ts = tiles_.empty() || !w.counts_tiles ? nullptr : &tiles_[std::size_t(i * t.t_c() + j)];
  if (ts) ts->cls = cls;
  if (!visit) {
    static const Cost kZero{};
    const std::int64_t prev = prev_visited_;
    prev_visited_ = -1;  // a skip event's step names no previous tile
    emit(Level::inner, i, j, {}, kZero, true, cls);
    prev_visited_ = prev;
    return true;
  }
  if (w.counts_tiles) {
    ++tiles_count_.visited;
    if (ts) ts->visit = visits_;
    ++visits_;
  }
  const int key = (i == t.t_r() - 1 ? 1 : 0) + (j == t.t_c() - 1 ? 2 : 0);
  const Memo& m = memo(w, w.inner_memo[std::size_t(key)], w.launch->body, i, j);
  resident_ = Resident{i, j, m.scores, m.sram};
  w.sram_peak = std::max(w.sram_peak, resident_.bytes);
  emit(Level::inner, i, j, w.launch->body, m.cost, false, cls);
  ++ring_;
  prev_visited_ = inner_index;
  return true;
}

bool Executor::outer_end_step(Plan& w) {
  const auto& acts = outer_visited_ ? w.end_visited : w.end_empty;
  ++o_;
  phase_ = Phase::outer_begin;
  const std::int64_t walked = outer_visited_ ? 1 : 0;  // this outer block's share of work_, after its end
  if (acts.empty()) {
    work_ += walked;
    return false;
  }
  const bool q = w.dim[0] == Dim::q_block;
  const std::int64_t i = q ? outer_index_ : -1, j = q ? -1 : outer_index_;
  const bool last = outer_index_ == w.n[0] - 1;
  const Memo& m = memo(w, w.end_memo[(last ? 1 : 0) + (outer_visited_ ? 2 : 0)], acts, i, j);
  resident_ = Resident{};
  emit(Level::outer_end, i, j, acts, m.cost, false, TileClass::full);
  work_ += walked;
  return true;
}

bool Executor::next_launch() {
  if (launch_ + 1 < plans_.size()) carried_[block_] = next_step_;
  if (++launch_ == plans_.size()) {
    done_ = true;
    resident_ = Resident{};
    return false;
  }
  start_launch();
  return true;
}

bool Executor::step() {
  if (done_) return false;
  for (;;) {
    Plan& w = plans_[launch_];
    switch (phase_) {
      case Phase::prologue: if (prologue_step(w)) return true; break;
      case Phase::outer_begin: if (outer_begin_step(w)) return true; break;
      case Phase::inner: if (inner_step(w)) return true; break;
      case Phase::outer_end: if (outer_end_step(w)) return true; break;
      case Phase::next_launch: if (!next_launch()) return false; break;
    }
  }
}

void Executor::run() {
  while (step()) {
  }
}

Cost Executor::tile_cost(std::int64_t i, std::int64_t j) const {
  Cost c;
  if (p_.block_skip && tile_class(p_.tiling, p_.band, i, j) == TileClass::skipped) return c;
  for (const Launch& l : s_.launches)
    if (!l.body.empty()) c += sum_cost(l.body, i, j);
  return c;
}

StepView Executor::tile_step(std::int64_t i, std::int64_t j) const {
  StepView s;
  for (std::size_t k = 0; k < plans_.size(); ++k) {
    const Plan& w = plans_[k];
    if (w.depth != 2 || w.launch->body.empty()) continue;
    // the loop counters (dispatch positions) of i and j, then the block number
    std::int64_t block = 0;
    for (int lv = 0; lv < 2; ++lv) {
      const std::int64_t index = w.dim[lv] == Dim::q_block ? i : j;
      block += w.stride[lv] * (w.descending[lv] ? w.n[lv] - 1 - index : index);
    }
    if (w.splits > 0) {  // the split whose K/V blocks hold j
      s.split = partition_of(p_, w.split_dim, j);
      block += w.split_stride * s.split;
    }
    s.dispatch = std::uint32_t(block);
    s.block = std::uint32_t(w.ctas > 0 ? block % w.ctas : block);
    s.launch = std::uint16_t(k);
    s.level = Level::inner;
    s.i = i;
    s.j = j;
    s.cls = tile_class(p_.tiling, p_.band, i, j);
    s.skip = p_.block_skip && s.cls == TileClass::skipped;
    if (!s.skip) s.actions = w.launch->body;
    return s;
  }
  return s;
}

Cost Executor::cost_one_head() const {
  Cost c;
  for (const Cost& l : launch_cost_) c += l;
  return c;
}

Counters Executor::counters() const {
  Counters c;
  const auto bh = std::uint64_t(p_.bh());
  const GpuSpec& g = p_.gpu;
  for (std::size_t k = 0; k < plans_.size(); ++k) {
    const Launch& l = *plans_[k].launch;
    LaunchCounters lc;
    lc.name = l.name;
    lc.cost = launch_cost_[k];
    lc.cost *= bh;
    lc.grid = blocks_per_head(l, p_) * p_.bh();
    if (l.persistent) lc.grid = g.sms;  // one thread block per SM walks the tiles (Launch::persistent)
    lc.sram_peak_bytes = plans_[k].sram_peak;
    // the one occupancy rule (memory/occupancy.hpp launch_occupancy, which the L2 and time models
    // take too); 0 where a block does not fit on an SM (its SRAM peak, or its warps): no wave runs
    const Occupancy o = launch_occupancy(p_, l);
    const bool fits = lc.sram_peak_bytes <= g.smem_per_sm && launch_warps(p_, l) <= g.max_warps_per_sm;
    const std::int64_t per_sm = fits ? o.blocks_per_sm : 0;
    lc.blocks_per_sm = per_sm;
    lc.waves = per_sm > 0 ? ceil_div(lc.grid, g.sms * per_sm) : 0;
    // A load writes the tile where the launch keeps it; a store reads it from there.
    for (int x = 0; x < kTensorCount; ++x) {
      const Memory home = placement_of(l, Tensor(x));
      if (home == Memory::hbm) continue;  // the launch does not move this tensor
      c.levels[int(home)][x][int(Dir::write)] += lc.cost.hbm[x][int(Dir::read)];
      c.levels[int(home)][x][int(Dir::read)] += lc.cost.hbm[x][int(Dir::write)] + lc.cost.hbm[x][int(Dir::atomic)];
    }
    c.cost += lc.cost;
    c.grid_blocks += lc.grid;
    c.sram_peak_bytes = std::max(c.sram_peak_bytes, lc.sram_peak_bytes);
    c.blocks_per_sm = k == 0 ? lc.blocks_per_sm : std::min(c.blocks_per_sm, lc.blocks_per_sm);
    c.waves += lc.waves;
    c.launches.push_back(std::move(lc));
  }
  c.levels[int(Memory::hbm)] = c.cost.hbm;
  for (const LevelObserver* level : levels_) level->add_levels(c, done_);
  c.tiles = tiles_count_;
  for (std::uint64_t* v : {&c.tiles.total, &c.tiles.visited, &c.tiles.full, &c.tiles.partial, &c.tiles.skipped})
    *v *= bh;
  c.sram_capacity = p_.sram_capacity;
  c.steps = steps_;
  return c;
}

}  // namespace flashlab
