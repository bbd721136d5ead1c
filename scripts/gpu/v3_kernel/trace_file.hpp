// trace_file.hpp — the V3 staged kernel's recorded events as a trace file of the simulator's own
// format (docs/events.md "Files"), written by the simulator's writer (sim/include/flashlab/trace/
// trace_io.hpp write_trace) with a header whose config the simulator resolves from the kernel's
// variant (sim/include/flashlab/config/config.hpp Config -> resolve()). Compiled by the host C++
// compiler and linked with flashlab_sim (scripts/gpu/v3_kernel/CMakeLists.txt); the plain nvcc build
// of ncu_run.sh has no `v3 trace` and does not compile this file.
//
// Stream order (docs/events.md "Stream order"): the kernel's agents record concurrently, each into
// its own buffer in program order. merge_stream_order orders them by (launch, block, step), then
// within one step: the producer role's events first (load, arrive ... stage_full, wait ...
// stage_empty: the producer warpgroup's, or with warp specialization off consumer warpgroup 0's),
// in program order, then the consumer warpgroups' other events position by position (warpgroup 0's
// first, then 1's, ...), which is how the simulator writes one action of every warpgroup in turn.
// That order is a convention of the simulator, not something the GPU fixes: compare per (block,
// step, agent) subsequence where two agents' events interleave differently (events_check.py does).
#pragma once

#include <string>
#include <vector>

#include "flashlab/contract/event.hpp"

namespace flashlab {
struct Config;  // flashlab/config/config.hpp: not included here, main.cu (nvcc) includes this header
}

namespace v3trace {

/// One compiled variant at one shape: what the simulator needs to describe the same launch.
struct Spec {
  bool bf16 = false, causal = false;
  int d = 0, batch = 1, n = 1, heads = 1;
  int br = 0, bc = 0, stages = 2;
  bool warp_spec = true, pingpong = true, intra_overlap = true;
  bool persistent = true;  // the kernel's "static" and "dynamic" schedulers are the simulator's persistent one
  std::string command;     // the command line that recorded the trace
  std::string device, driver, commit;
};

/// The simulator's Config of spec: V3 at its shape, tile, dtype, mask and switches (unresolved).
flashlab::Config config_of(const Spec& s);

/// The `flashlab trace` flags of spec (e.g. "--algo v3 --seq 1000 --d 128 --br 128 --bc 176 ...").
std::string sim_flags(const Spec& s);

/// T_r and T_c of spec as the simulator resolves it; throws std::runtime_error with the
/// simulator's message where it refuses the config.
void tile_counts(const Spec& s, int& t_r, int& t_c);

/// Sorts events into the simulator's stream order (header comment), stably.
void merge_stream_order(std::vector<flashlab::Event>& events);

/// Writes events (merged) as a trace of source gpu, level block, to path; text or binary form.
/// Throws std::runtime_error with the simulator's message on a config it refuses or a write error.
void write(const std::string& path, const Spec& s, std::vector<flashlab::Event> events, bool text);

}  // namespace v3trace
