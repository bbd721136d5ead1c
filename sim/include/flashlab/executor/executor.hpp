// executor.hpp — walks a Schedule one step at a time, counting what every step costs.
//
// One executor for all three algorithms: the schedule (schedule.hpp) says what each step does,
// action_cost.hpp says what each action costs, and observers (event recorders, numerics, the viewer)
// see every step as it happens. The walk covers one (batch, head); counters() multiplies by
// batch * heads, since every head runs the same schedule.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// Where in the loop nest a step is.
enum class Level : std::uint8_t { prologue, outer_begin, inner, outer_end, epilogue };

/// One step as observers see it.
struct StepView {
  std::uint16_t launch = 0; // kernel launch within the schedule (event.hpp Event::launch)
  std::uint32_t block = 0;  // thread block: the Q block i for V2, 0 for V1 and standard
  std::uint32_t step = 0;   // step number within the block
  Level level = Level::prologue;
  std::int64_t i = -1, j = -1;  // tile indices (-1 where the step has none)
  bool skip = false;            // a skipped tile: no action runs, one `skip` event
  TileClass cls = TileClass::full;  // inner steps: the tile's class
  std::span<const Action> actions;  // what the step runs (if_visited already applied)
  const Cost* cost = nullptr;       // what it costs, one (batch, head)
};

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void on_step(const StepView& s) = 0;
};

/// Per-tile record kept for later consumers (viewer, reports). Costs come from tile_cost().
struct TileStat {
  TileClass cls = TileClass::full;
  std::int32_t visit = -1;  // visit order among visited tiles (-1: not visited)
};

/// Tiles on chip after a step: the Q block and K/V block resident (-1: none), and their bytes.
struct Resident {
  std::int64_t q_block = -1, kv_block = -1;
  bool scores = false;       // S_ij / P_ij on chip
  std::int64_t bytes = 0;    // Q_i + K_j + V_j + S_ij at e_in, as in sram_tile_bytes
};

struct ExecOptions {
  bool tile_stats = false;  // keep a TileStat per tile (T_r * T_c of them)
};

class Executor {
 public:
  explicit Executor(const Problem& p, ExecOptions opt = {});

  /// Observers see every later step; they must outlive the executor's run.
  void add_observer(StepObserver* o) { observers_.push_back(o); }

  /// Runs one step. Returns false once the schedule is finished (and runs nothing).
  bool step();
  /// Runs every remaining step.
  void run();
  bool done() const { return phase_ == Phase::done; }

  const Problem& problem() const { return p_; }
  const Schedule& schedule() const { return s_; }
  /// The last step run (valid after a step() that returned true).
  const StepView& last() const { return view_; }
  /// Totals so far; HBM, ops, FLOPs and tiles multiplied by batch * heads.
  Counters counters() const;
  /// Cost so far of one (batch, head).
  const Cost& cost_one_head() const { return cost_; }
  Resident resident() const { return resident_; }

  /// Per-tile records (empty unless ExecOptions::tile_stats), row-major by (i, j).
  const std::vector<TileStat>& tile_stats() const { return tiles_; }
  /// Cost of tile (i, j)'s step for one (batch, head): zero for a tile the schedule skips.
  Cost tile_cost(std::int64_t i, std::int64_t j) const;

 private:
  enum class Phase : std::uint8_t { prologue, outer_begin, inner, outer_end, epilogue, done };
  struct Memo {
    bool ready = false;
    Cost cost;
  };
  void emit(Level level, std::int64_t i, std::int64_t j, std::span<const Action> acts, const Cost& c,
            bool skip, TileClass cls);
  const Cost& memo_cost(Memo& m, std::span<const Action> acts, std::int64_t i, std::int64_t j);
  bool outer_visits(std::int64_t o) const;
  Cost sum_cost(std::span<const Action> acts, std::int64_t i, std::int64_t j) const;

  Problem p_;
  Schedule s_;
  ExecOptions opt_;
  std::vector<StepObserver*> observers_;
  std::vector<Action> begin_visited_, begin_empty_, end_visited_, end_empty_;

  Phase phase_ = Phase::prologue;
  std::size_t pro_ = 0, epi_ = 0;
  std::int64_t o_ = 0, k_ = 0, n_outer_ = 0, n_inner_ = 0;
  bool outer_visited_ = false;
  std::uint32_t block_ = 0, next_step_ = 0;
  std::int32_t visits_ = 0;

  Cost cost_;
  TileCounts tiles_count_;
  std::int64_t sram_peak_ = 0;
  std::uint64_t steps_ = 0;
  Resident resident_;
  StepView view_;
  Cost scratch_;
  // memo of step costs by (last row block?, last col block?) and, for outer steps, visited?
  std::array<Memo, 4> inner_memo_{};
  std::array<Memo, 4> begin_memo_{}, end_memo_{};
  std::vector<TileStat> tiles_;
};

/// Counts a whole configuration (the executor run to its end, no observers).
Counters count(const Problem& p);

}  // namespace flashlab
