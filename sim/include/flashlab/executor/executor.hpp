// executor.hpp — walks a Schedule one step at a time, counting what every step costs.
//
// One executor for every schedule: the schedule (schedule.hpp) says what each launch's loops and
// steps are, action_cost.hpp says what each action costs, and observers (event recorders,
// numerics, the viewer) see every step as it happens. The memory levels measured by watching the
// walk (the sector counter, the L2 model) are observers too, constructed and attached by whoever
// wants them (count.hpp count, the time model's model()): the executor holds none of its own. The
// walk covers one (batch, head), launch after launch; counters() multiplies by batch * heads,
// since every head runs the same schedule.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// Where in a launch's loop nest a step is.
enum class Level : std::uint8_t { prologue, outer_begin, inner, outer_end };

/// One step as observers see it.
struct StepView {
  /// Thread block that runs the step: its dispatch position (`dispatch`), or in a persistent launch
  /// (Launch::persistent) the one of the GPU's SM-count G thread blocks that walks it: dispatch mod
  /// G, as FA3's persistent scheduler deals tiles c, c + G, c + 2G, ... to thread block c.
  std::uint32_t block = 0;
  /// The tile's dispatch position within the launch and the (batch, head): the linear index of the
  /// launch's thread-block loops other than batch and head, blockIdx.x fastest (the Q block i for
  /// V2, 0 for V1 and standard attention); 0 for prologue steps. Equal to `block` unless persistent.
  std::uint32_t dispatch = 0;
  /// Step number within the thread block, counted on across launches for the same block number,
  /// and across the tiles a persistent thread block walks, so that (block, step) names one step of
  /// a (batch, head) (standard attention: 0, 1, 2).
  std::uint32_t step = 0;
  std::uint16_t launch = 0;  // index of the launch in the schedule (event.hpp Event::launch)
  Level level = Level::prologue;
  std::int64_t i = -1, j = -1;  // tile indices (-1 where the step has none)
  std::int64_t split = -1;      // the K/V split s of a launch that loops over splits (-1: none)
  bool skip = false;            // a skipped tile: no action runs, one `skip` event
  TileClass cls = TileClass::full;  // inner steps: the tile's class
  std::span<const Action> actions;  // what the step runs (if_visited already applied)
  const Cost* cost = nullptr;       // what it costs, one (batch, head)
  /// The thread block's visited tiles before this step in this launch (a persistent thread block's
  /// over every outer block it walked, as FA3 keeps one pipeline state per thread block): the
  /// position of an inner step's K/V blocks in a stage ring (Action::ring); at an outer end, the
  /// tiles visited so far.
  std::int64_t ring = 0;
  /// The outer blocks with a visited tile that the thread block walked before this one in this
  /// launch (FA3's work_idx, whose parity is the phase of Q's barrier): 0 where each outer block has
  /// a thread block of its own (V2; V3 with --scheduler grid), the count so far where one thread
  /// block walks several (a persistent launch; V1's single thread block).
  std::int64_t work = 0;
  /// The inner index of the outer block's previous visited tile (inner steps), or of its last one
  /// (outer end); -1 where there is none. A deferred body action (Action::deferred) is issued on it.
  std::int64_t prev_j = -1;
  /// The launch body's deferred actions (Action::deferred): an outer end issues them on prev_j.
  std::span<const Action> deferred;
};

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void on_step(const StepView& s) = 0;
};

/// A memory level measured by watching the walk (sector_counter.hpp SectorCounter, l2_model.hpp
/// L2Model): attached with Executor::add_level, it sees every step, and Executor::counters() asks
/// it to add its figures.
class LevelObserver : public StepObserver {
 public:
  /// Adds this level's figures for the walk so far to c, whose launches are filled in: its
  /// Counters::levels entries, per-launch figures, and the flag that says the level ran.
  /// `finished`: whether the walk has reached its end (a level that needs the whole walk adds
  /// nothing before).
  virtual void add_levels(Counters& c, bool finished) const = 0;
};

/// Per-tile record kept for later consumers (viewer, reports). Costs come from tile_cost().
struct TileStat {
  TileClass cls = TileClass::full;
  std::int32_t visit = -1;  // visit order among visited tiles (-1: not visited)
};

/// SRAM contents after a step: the Q block and K/V block resident (-1: none) and the bytes of the
/// tiles the launch keeps in SRAM (schedule.hpp sram_bytes).
struct Resident {
  std::int64_t q_block = -1, kv_block = -1;
  bool scores = false;     // S_ij / P_ij in SRAM (V1; V2 keeps them in registers)
  std::int64_t bytes = 0;
};

struct ExecOptions {
  bool tile_stats = false;  // keep a TileStat per tile (T_r * T_c of them)
};

class Executor {
 public:
  /// Walks p.algo's schedule.
  explicit Executor(const Problem& p, ExecOptions opt = {});
  /// Walks `s` (checked with check_schedule: std::logic_error if it cannot be walked).
  Executor(const Problem& p, Schedule s, ExecOptions opt = {});
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Observers see every later step; they must outlive the executor's run.
  void add_observer(StepObserver* o) { observers_.push_back(o); }
  /// A memory level sees every later step, as an observer, and adds its figures to counters(); it
  /// must outlive the executor's last counters().
  void add_level(LevelObserver* l) {
    observers_.push_back(l);
    levels_.push_back(l);
  }

  /// Runs one step. Returns false once the schedule is finished (and runs nothing).
  bool step();
  /// Runs every remaining step.
  void run();
  bool done() const { return done_; }

  const Problem& problem() const { return p_; }
  const Schedule& schedule() const { return s_; }
  /// The last step run (valid after a step() that returned true).
  const StepView& last() const { return view_; }
  /// Totals so far; bytes, ops, FLOPs and tiles multiplied by batch * heads, per launch and in all;
  /// with the figures of each level attached (add_level).
  Counters counters() const;
  /// Cost so far of one (batch, head), all launches.
  Cost cost_one_head() const;
  Resident resident() const { return resident_; }

  /// Per-tile records (empty unless ExecOptions::tile_stats), row-major by (i, j).
  const std::vector<TileStat>& tile_stats() const { return tiles_; }
  /// Cost of tile (i, j)'s steps for one (batch, head), over the launches that walk tiles: zero
  /// for a tile the schedule skips, and for a schedule without tiles (has_tiles).
  Cost tile_cost(std::int64_t i, std::int64_t j) const;
  /// Tile (i, j)'s step in the first launch that walks tiles, as the walk shows it (block, launch,
  /// actions, class; cost unset). Requires has_tiles(schedule()).
  StepView tile_step(std::int64_t i, std::int64_t j) const;

 private:
  // A step's cost and SRAM contents, which depend on (i, j) only through the ragged edges.
  struct Memo {
    bool ready = false;
    bool scores = false;
    std::int64_t sram = 0;
    Cost cost;
  };
  // One launch as the walk needs it, read off its data once.
  struct Plan {
    const Launch* launch = nullptr;
    int depth = 0;                      // tile loops walked: 0, 1 or 2
    std::array<Dim, 2> dim{};           // outer, inner
    std::array<bool, 2> descending{};
    std::array<std::int64_t, 2> n{};    // extents
    std::array<std::int64_t, 2> stride{};  // block-number weight of a thread-block tile loop (0: none)
    // a loop that partitions the K/V blocks among thread blocks (schedule.hpp partitions_kv_blocks):
    // its dimension, extent and block-number weight, and the walked level it restricts (the K/V loop's)
    Dim split_dim = Dim::kv_block;
    std::int64_t splits = 0, split_stride = 0;
    int split_level = 1;
    std::int64_t ctas = 0;  // a persistent launch's thread blocks (the GPU's SM count); 0: one per tile
    std::vector<Action> begin_visited, begin_empty, end_visited, end_empty;
    std::vector<Action> deferred;  // the body's deferred actions
    std::array<Memo, 4> inner_memo{}, begin_memo{}, end_memo{};
    std::int64_t sram_peak = 0;
    // the first launch that walks tiles: its walk is the one tile counts and TileStats record
    // (`--pass both` walks the tiles twice, forward and backward)
    bool counts_tiles = false;
  };
  enum class Phase : std::uint8_t { prologue, outer_begin, inner, outer_end, next_launch };

  void plan();
  void start_launch();
  // Moves to the thread block that runs dispatch position `dispatch`, keeping the last one's step
  // (and, in a persistent launch, its ring position and work) for when it comes back.
  void enter_block(std::uint32_t dispatch);
  void emit(Level level, std::int64_t i, std::int64_t j, std::span<const Action> acts, const Cost& c, bool skip,
            TileClass cls);
  // step()'s phases, one function each: each emits at most one step and returns whether it did.
  bool prologue_step(Plan& w);     // the launch's prologue actions, one step each
  bool outer_begin_step(Plan& w);  // the next outer block (the next split after the last), its begin actions
  bool inner_step(Plan& w);        // the next tile of the inner loop, skipped or visited
  bool outer_end_step(Plan& w);    // the outer block's end actions
  // Moves to the next launch; false once every launch is walked (step() then returns false).
  bool next_launch();
  bool outer_visits(const Plan& w, Dim d, std::int64_t index) const;
  Cost sum_cost(std::span<const Action> acts, std::int64_t i, std::int64_t j) const;
  // The index the k-th iteration of loop `level` visits: within the current split's K/V blocks
  // for the K/V loop of a split launch.
  std::int64_t index_of(const Plan& w, int level, std::int64_t k) const {
    if (level == w.split_level && w.splits > 0) return split_.at(w.descending[level] ? split_.count() - 1 - k : k);
    return w.descending[level] ? w.n[level] - 1 - k : k;
  }
  // Iterations of loop `level`: the current split's K/V blocks for the K/V loop of a split launch.
  std::int64_t extent_of(const Plan& w, int level) const {
    return level == w.split_level && w.splits > 0 ? split_.count() : w.n[level];
  }
  void enter_split(const Plan& w, std::int64_t s);
  Resident resident_at(const Plan& w, std::int64_t i, std::int64_t j) const;
  const Memo& memo(const Plan& w, Memo& m, std::span<const Action> acts, std::int64_t i, std::int64_t j) const;

  Problem p_;
  Schedule s_;
  ExecOptions opt_;
  std::vector<StepObserver*> observers_;
  std::vector<const LevelObserver*> levels_;
  std::vector<Plan> plans_;

  std::size_t launch_ = 0;
  Phase phase_ = Phase::prologue;
  bool done_ = false;
  std::size_t pro_ = 0;
  std::int64_t o_ = 0, k_ = 0, outer_index_ = 0;
  std::int64_t sp_ = 0;  // the split a split launch is walking
  StridedRange split_;   // its K/V blocks
  bool outer_visited_ = false;
  std::uint32_t block_ = 0, dispatch_ = 0, next_step_ = 0;
  std::int64_t ring_ = 0;          // visited tiles of the current thread block in this launch
  std::int64_t work_ = 0;          // its visited outer blocks before the current one (StepView::work)
  struct Walked {                  // where a persistent thread block left off: ring_ and work_
    std::int64_t ring = 0, work = 0;
  };
  std::unordered_map<std::uint32_t, Walked> walked_;  // per thread block of the current persistent launch
  std::int64_t prev_visited_ = -1; // the outer block's last visited inner index (-1: none yet)
  std::unordered_map<std::uint32_t, std::uint32_t> carried_;  // next step of a block, for later launches
  std::int32_t visits_ = 0;

  std::vector<Cost> launch_cost_;
  TileCounts tiles_count_;
  std::uint64_t steps_ = 0;
  Resident resident_;
  StepView view_;
  Cost scratch_;
  std::vector<TileStat> tiles_;
};

}  // namespace flashlab
