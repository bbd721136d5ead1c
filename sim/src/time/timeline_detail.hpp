// timeline_detail.hpp — the pieces of timeline.cpp (flashlab/time/timeline.hpp): V3's tiles as the walk
// records them, and the event-by-event layout of one SM's V3 thread block (v3_timeline.cpp). Private
// to sim/src/time.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "flashlab/time/timeline.hpp"
#include "v3_work.hpp"

namespace flashlab::time_detail {

/// One step of a V3 tile (Q block i of one (batch, head)), as the walk visits it.
struct V3TileStep {
  Level level = Level::inner;
  std::int64_t j = -1;        // K/V block (inner steps)
  V3StepWork work;            // v3_step_work: the whole thread block's (every consumer warpgroup's)
  double q_bytes = 0;         // Q_i loaded (outer begin), bytes
  double kv_bytes = 0;        // K_j loaded (inner; V_j the same), bytes
  double store_bytes = 0;     // O_i, L_i stored (outer end), bytes
};
/// Per Q block i: its steps in walk order (outer begin, inner steps in the mainloop's j order, outer end).
using V3Tiles = std::vector<std::vector<V3TileStep>>;

/// An interval with what the analysis needs beside TimelineInterval's fields.
struct Span {
  TimelineInterval iv;
  std::int32_t by = -1;   // unit lanes: the agent lane that issued the work
};

/// One SM laid out: lanes, spans, the ring's occupancy changes (time, +1 / -1).
struct Laid {
  std::vector<TimelineLane> lanes;
  std::vector<Span> spans;
  std::vector<std::pair<double, int>> ring_deltas;
  double time_s = 0;
};

/// The unit lanes of a timeline, in this order after the agent lanes.
inline constexpr HwUnit kTimelineUnits[] = {HwUnit::tensor, HwUnit::sfu, HwUnit::issue, HwUnit::smem, HwUnit::l2};
inline constexpr int kTimelineUnitCount = 5;

/// One SM's V3 thread block walking `blocks` ((batch, head), Q block) in order, event by event (FA3
/// Alg. 1 and 2, the staged kernel's order: scripts/gpu/v3_kernel/v3_forward.cuh Consumer::tile and
/// the producer branch). `latency_s`: a bulk copy's round trip after its transfer (round_trips.hpp
/// tma_round_trip, seconds); `iota`: TimeParams::issue_interval (a warpgroup's softmax lasts at least one
/// warp's instructions times iota cycles, the latency floor of step_time). Persistent: the ring and
/// the barriers carry on from tile to tile; grid: each tile is a thread block of its own, started
/// when the last one has finished. `paced`: a softmax or finalize lasts at least one warp's instructions
/// at the pace of the others executing beside it at each moment (v3_pace.hpp PacedStreams), in place of
/// the floor at `iota`.
Laid lay_v3(const Problem& p, bool persistent, const V3Tiles& tiles,
            const std::vector<std::pair<std::int64_t, std::int64_t>>& blocks, double latency_s, double iota,
            bool paced = false);

}  // namespace flashlab::time_detail
