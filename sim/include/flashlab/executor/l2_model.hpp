// l2_model.hpp — the L2 and DRAM levels (memory.hpp Memory::l2, Memory::dram): an LRU model of the
// GPU's L2 over the loads and stores of the thread blocks that are resident together, in the
// order the GPU dispatches them, with write-back of stores. An observer of the one walk: it
// records each thread block's accesses for one (batch, head) as the executor walks them, then
// replays them for all batch * heads (docs/model.md "L2 and DRAM").
//
// The rules:
//   - granularity: one access is one tile of one tensor as a load or store moves it (Q_i, O_i,
//     l_i, m_i, L_i by Q block; K_j, V_j by K/V block; S_ij, P_ij by tile, or a row of S or P for
//     a launch with one thread block per row), in whole 32-byte sectors (a tensor with a copy per
//     split, schedule.hpp copies, keyed apart per copy; one copy shared by every split); the L2 is a fully
//     associative LRU over these tiles with the preset's capacity (GpuSpec::l2_bytes). A load of a
//     tile not present reads it from DRAM; a store marks it dirty without reading; a dirty tile
//     evicted, or still present when the launch ends, is written to DRAM — during the launch when
//     evicted, or by the early write-back below, else after it. A padded block
//     (Action::padded: FA2's dQaccum and D, allocated with N_q rounded up) is Q block i's B_r
//     rows, inside the rounded allocation; a K/V head's region (Action::per_kv_head) is each query
//     head's 1 / group share of it.
//   - residency: a launch keeps occupancy(...).slots thread blocks resident (occupancy.hpp);
//     blocks start in dispatch order (blockIdx.x fastest, then head, then batch) as slots free up;
//     the resident blocks advance in lock step, one step (a tile of the walk) each per round.
//   - each launch starts with an empty L2 (what Nsight Compute measures per kernel, its caches
//     flushed before each launch).
//   - whole-tensor actions (standard attention, V1 line 2) are split among the thread blocks as
//     the kernels split them (sector_counter.hpp): per-query tensors by Q block or row, K and V
//     read by every block in K/V blocks, S and P by tile (i, j) or by row.
//   - early write-back (a launch with Launch::early_write_back: V3's): the device's L2 is set
//     associative (sets picked by hashing the address) and split in two partitions that each keep a
//     copy of a line read from their side, so dirty lines leave it before a fully associative LRU
//     of its size would evict them. A fraction f of every byte the launch stores is written during
//     it — or what the LRU evicted, where that is more: f is the mean over x in [0, 1] of
//     P(Poisson(A x H / (c L2)) >= A), Smith's stochastic model of a set-associative LRU (A ways, c
//     of the L2 usable) for a line stored evenly over the launch with a fraction x of the bytes the
//     launch holds, H, still to come. H: each tile once per stay in the L2, a tile loaded by r thread
//     blocks 2 - 0.5^r copies, a tile only stored one. kWriteBack's A and c are
//     scripts/check/v3_l2_writeback.py's least squares over the V3 kernel's H100 launches, which
//     scores the simulator on its H200 launches (docs/model.md "O's write-back, on two cards").
//   - cost: heads are identical, so a launch with one thread block per head is replayed for one
//     head with the L2 shared by min(slots, batch * heads) heads (exact under lock step), and a
//     launch whose replay would pass kReplayBudget accesses is replayed for the first heads only
//     (at least two waves and a half) and scaled from the heads that ran while the GPU was full;
//     a head whose own accesses pass kRecordBudget is recorded for its first thread blocks only.
#pragma once

#include <cstdint>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// Accesses replayed per launch before the replay is cut to the first heads.
inline constexpr std::uint64_t kReplayBudget = std::uint64_t(1) << 23;
/// Accesses recorded per launch for one (batch, head); past it the walk's later thread blocks are
/// not recorded, the first ones are replayed, and each tensor's DRAM bytes are its replayed DRAM
/// bytes per requested byte times all its requested bytes.
inline constexpr std::uint64_t kRecordBudget = std::uint64_t(1) << 23;

/// The early write-back's set-associative LRU (the header's rules): `ways` (A) lines a set, a
/// fraction `usable` (c) of the L2's bytes in use. scripts/check/v3_l2_writeback.py fits them and
/// fails when they differ from its fit.
struct WriteBackRule {
  int ways = 0;
  double usable = 0;
};
inline constexpr WriteBackRule kWriteBack{10, 0.88};

/// What the L2 model predicts for one launch, all batch * heads.
struct L2Launch {
  TensorBytes requests{};      // bytes reaching the L2: loads (read) and stores (write), sectors
  TensorBytes dram{};          // DRAM reads (misses) and writes (write-backs during the launch), bytes
  TensorBytes dirty_at_end{};  // [tensor][write]: stores still dirty in the L2 when the launch ends
                               // (written back later, after the launch: not in `dram`)
  std::int64_t slots = 0;      // thread blocks resident together
  std::int64_t heads_replayed = 0;  // (batch, head) pairs replayed (the rest scaled from them)
  double capacity_bytes = 0;   // L2 capacity the replay used (divided among heads in lock step)
};

/// A memory level of the walk, attached by whoever wants it (Executor::add_level; count.hpp count
/// with `l2`, the time model's model()) for the schedule `s` that the executor walks; `s` must
/// outlive it.
class L2Model : public LevelObserver {
 public:
  L2Model(const Problem& p, const Schedule& s);
  void on_step(const StepView& s) override;
  /// Once the walk is finished: replay()'s figures added to c, each launch's requests, DRAM bytes
  /// and dirty bytes at its end into c.launches[k] (l2, dram, l2_dirty_at_end), their sums into
  /// c.levels[l2] and c.levels[dram], and c.l2 set. Before the end of the walk, nothing.
  void add_levels(Counters& c, bool finished) const override;
  /// Replays what the walk recorded, one L2Launch per launch of the schedule. Call after the walk;
  /// the first call replays, later ones return the same result.
  const std::vector<L2Launch>& replay() const;

 private:
  struct Access {
    std::uint32_t key = 0;    // tile number within (launch, head, tensor)
    std::uint32_t bytes = 0;  // sector bytes
    std::uint8_t tensor = 0;
    Dir dir = Dir::read;      // an atomic reads the line (a miss fetches it) and leaves it dirty
    bool end_of_step = false;
  };
  using Program = std::vector<Access>;  // one thread block's accesses, steps marked
  struct Shape {
    Dim split = Dim::batch;    // the thread-block tile dimension: q_block, q_row; batch: none
    bool split_descending = false;
    bool kv_loop = false, kv_seq = false, q_loop = false, walks_tiles = false, early_write_back = false;
    std::int64_t blocks = 1;   // thread blocks per (batch, head)
  };

  void add(Program& prog, Tensor t, Dir dir, std::uint64_t key, std::uint64_t bytes) const;
  void end_step(Program& prog) const;
  void expand_whole(const StepView& s);
  void expand_in_step(Program& prog, const Action& a) const;
  L2Launch replay_launch(std::size_t k) const;
  // What the replayed heads' accesses cost: DRAM and requested bytes summed over the first
  // `counted` heads, dirty bytes left at the end over all of them.
  struct Replayed {
    TensorBytes dram{}, requests{}, dirty{};
    TensorBytes early{};  // of `dirty`, what left the L2 during the launch (Lru::written_early)
  };
  // Replays `heads` (batch, head) pairs of `progs` through one LRU of `capacity` bytes,
  // `slot_count` thread blocks resident together (dispatched head by head, as the GPU does).
  // `held_scale`: the launch's held bytes over the replayed heads' (Lru::written_early), 0 for a
  // launch without the early write-back.
  Replayed replay_heads(const std::vector<Program>& progs, std::int64_t heads, std::int64_t counted, double capacity,
                        std::int64_t slot_count, double held_scale) const;

  Problem p_;
  const Schedule* s_;
  std::vector<Shape> shapes_;
  std::vector<std::vector<Program>> programs_;  // [launch][dispatch position]
  std::vector<std::uint64_t> recorded_;         // [launch] accesses recorded
  std::vector<bool> truncated_;                 // [launch] recording stopped at kRecordBudget
  std::vector<std::uint32_t> truncated_at_;     // [launch] the block it stopped in (dropped)
  std::vector<TensorBytes> requested_;          // [launch] every access's sector bytes, one head
  Program scratch_;  // a step's accesses past the recording budget (counted, not kept)
  mutable std::vector<L2Launch> result_;
  mutable bool replayed_ = false;
};

}  // namespace flashlab
