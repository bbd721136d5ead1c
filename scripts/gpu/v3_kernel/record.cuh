// record.cuh — the instrumented build of V3's forward (issue 27 item 4): the simulator's block-level
// Event records (sim/include/flashlab/contract/event.hpp; the V3 stream of docs/events.md "V3") and
// per-warpgroup timestamps on %globaltimer's time base (PTX ISA "Special registers": %globaltimer,
// ns; %clock64, the SM's cycle counter; %smid).
//
// Why two clocks: on the H200 one %globaltimer read took about 64 ns (`v3 clock`, 2026-12-04: its
// value changes at every read, steps of 32-96 ns), and two reads per stamp slowed a traced tile of
// N = 3,000, d = 128 about 2x (kernel span 87 us, against ~37 us per tile for the plain kernel's
// rate). Stamps therefore read %clock64 (a few cycles), and each recording thread reads the pair
// (%globaltimer, %clock64) once when it starts and once when it ends (RecBuffers::sync); the host
// maps a stamp's cycles c to ns by that line: g0 + (c - c0) (g1 - g0) / (c1 - c0).
//
// Rec<false> is empty and every call on it compiles to nothing: v3_forward_kernel<C> (the timed,
// plain kernel) instantiates the body with it. Rec<true> is v3_forward_traced_kernel<C>'s.
//
// One recording thread per agent: the producer warpgroup's thread 0 (agent 1), consumer warpgroup
// k's thread 0 (agent 2 + k); each appends to its own buffers, slot (CTA, agent index), in program
// order, no atomics: agent index 0 the producer (with warp specialization off: unused), 1 + k
// consumer warpgroup k. Buffers: events[slot * ev_cap + n] with ev_count[slot], stamps[slot *
// st_cap + n] with st_count[slot] (a count past the capacity: records dropped, the host reports it),
// smid[cta].
//   Events: only for the tiles of (batch, head) traced_bh (`v3 trace`: 0, whose tiles come first in
//   the deal, so its CTAs' indices are the simulator's blocks), as the simulator's trace covers one
//   (batch, head); block = blockIdx.x; step, ring position n and Q phase w counted over every tile
//   the CTA ran (the same as the simulator's while no CTA runs two waves).
//   Stamps: every tile of every CTA; [t_begin, t_end] of one action (Stamp::What), %clock64 cycles,
//   with sync[slot] to map them to ns.
#pragma once

#include <cstdint>
#include <type_traits>

// The simulator's headers are on the include path of the CMake target only (V3_TRACE); the plain
// nvcc build (ncu_run.sh) neither includes them nor compiles an event: V3_EV expands to nothing.
#ifdef V3_TRACE
#include "flashlab/contract/event.hpp"
#define V3_EV(rec, ...)                                            \
  do {                                                             \
    if constexpr (std::decay_t<decltype(rec)>::kRecording) {       \
      if ((rec).events_on()) (rec).ev(__VA_ARGS__);                \
    }                                                              \
  } while (0)
#else
#define V3_EV(rec, ...) \
  do {                  \
  } while (0)
#endif

namespace v3 {

// What a stamp times. Producer (or, warp specialization off, consumer warpgroup 0 between its
// GEMMs): waits for an empty stage, the TMA issue (arrive.expect_tx + the bulk copies). Consumer:
// waits for a full stage, the ping-pong named barrier, the wgmma issue of each GEMM, their
// wait_group, the softmax (mask, row max, exp2, row sum), O's rescale and P's conversion, the
// epilogue (O / l, L, stores).
enum class What : std::uint8_t {
  wait_q_empty = 0, load_q, wait_k_empty, load_k, wait_v_empty, load_v, sched,
  wait_q_full = 10, wait_k_full, wait_v_full, pp_wait, issue_s, issue_pv, wait_s, softmax, wait_pv, rescale,
  epilogue, sched_wait
};

struct Stamp {
  std::uint64_t t0 = 0, t1 = 0;  // %clock64 of the SM, cycles (the host converts: sync)
  std::int32_t i = -1, j = -1;   // Q block (m block) and K/V block
  std::uint32_t step = 0;        // the event stream's step of the action
  What what = What::wait_q_empty;
  std::uint8_t agent = 0;        // 1 producer, 2 + k consumer warpgroup k (docs/events.md "agent")
  std::uint16_t pad = 0;
};
static_assert(sizeof(Stamp) == 32);

struct RecBuffers {
  void* events = nullptr;  // flashlab::Event[slots * ev_cap]
  unsigned* ev_count = nullptr;
  unsigned ev_cap = 0;
  Stamp* stamps = nullptr;
  unsigned* st_count = nullptr;
  unsigned st_cap = 0;
  unsigned* smid = nullptr;  // [gridDim.x]
  std::uint64_t* sync = nullptr;  // [slots][4]: globaltimer, clock64 at the agent's start, then at its end
  int agents = 0;            // buffer slots per CTA: 1 + consumer warpgroups
  int traced_bh = 0;         // the (batch, head) b * H + h whose events are recorded
  int t_c = 0;               // K/V blocks of the simulator's tiling (steps per tile: t_c + 2)
};

__device__ __forceinline__ std::uint64_t globaltimer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ std::uint64_t clock64_now() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

template <bool kOn>
struct Rec {
  static constexpr bool kRecording = false;
  static constexpr std::uint8_t agent = 0;
  __device__ Rec(const RecBuffers&, int, bool) {}
  __device__ void tile(int) {}
  __device__ bool events_on() const { return false; }
  __device__ std::uint64_t now() const { return 0; }
  __device__ void stamp(What, std::uint64_t, std::uint32_t, int, int) {}
  __device__ void finish() {}
};

#ifdef V3_TRACE
template <>
struct Rec<true> {
  static constexpr bool kRecording = true;
  RecBuffers b;
  unsigned slot;
  std::uint8_t agent;
  bool on, ev_on = false;
  // `idx`: the agent's buffer index in its CTA, 0 the producer (Event::agent 1), 1 + k consumer
  // warpgroup k (agent 2 + k); `on`: this thread records
  __device__ Rec(const RecBuffers& b_, int idx, bool on_)
      : b(b_), slot(blockIdx.x * b_.agents + idx),
        agent(std::uint8_t(idx == 0 ? flashlab::kAgentProducer : flashlab::kAgentConsumer + idx - 1)), on(on_) {
    if (on) {
      b.sync[4 * slot + 0] = globaltimer();
      b.sync[4 * slot + 1] = clock64_now();
    }
  }
  // the end of this agent's work: the second (globaltimer, clock64) pair
  __device__ void finish() {
    if (on) {
      b.sync[4 * slot + 3] = clock64_now();
      b.sync[4 * slot + 2] = globaltimer();
    }
  }
  // the tile's (batch, head): events on for the traced one
  __device__ void tile(int bh) { ev_on = on && bh == b.traced_bh; }
  __device__ bool events_on() const { return ev_on; }
  __device__ std::uint64_t now() const { return on ? clock64_now() : 0; }
  __device__ void stamp(What w, std::uint64_t t0, std::uint32_t step, int i, int j) {
    if (!on) return;
    const std::uint64_t t1 = clock64_now();
    const unsigned n = b.st_count[slot]++;
    if (n >= b.st_cap) return;
    Stamp s;
    s.t0 = t0;
    s.t1 = t1;
    s.i = i;
    s.j = j;
    s.step = step;
    s.what = w;
    s.agent = agent;
    b.stamps[std::size_t(slot) * b.st_cap + n] = s;
  }
  // one Event; `who`: its agent (the skip events of a tile are the thread block's: 0)
  __device__ void ev(std::uint32_t step, flashlab::Op op, flashlab::Tensor x, flashlab::Eq eq, int i, int j,
                     std::uint32_t rows, std::uint32_t cols, std::uint64_t bytes, std::uint8_t who) {
    if (!ev_on) return;
    const unsigned n = b.ev_count[slot]++;
    if (n >= b.ev_cap) return;
    flashlab::Event e;
    e.launch = 0;
    e.block = blockIdx.x;
    e.step = step;
    e.bytes = bytes;
    e.i = i;
    e.j = j;
    e.rows = rows;
    e.cols = cols;
    e.op = op;
    e.tensor = x;
    e.eq = eq;
    e.warp = -1;
    e.agent = who;
    static_cast<flashlab::Event*>(b.events)[std::size_t(slot) * b.ev_cap + n] = e;
  }
};
#endif

}  // namespace v3
