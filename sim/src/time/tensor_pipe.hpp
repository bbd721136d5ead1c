// tensor_pipe.hpp — the SM's tensor pipe as V3's consumer warpgroups share it in the timeline
// (v3_timeline.cpp lay_v3). Private to sim/src/time.
#pragma once

#include <deque>
#include <utility>
#include <vector>

namespace flashlab::time_detail {

/// The SM's tensor pipe: the consumer warpgroups' GEMMs (a warpgroup's wgmma group on one K/V block),
/// each `work` seconds at the SM's whole wgmma rate in `wgmmas` instructions of equal length. It serves
/// a queue of batches in order. A GEMM joins the last batch where that batch's GEMMs are its own
/// warpgroup's (one turn issues GEMM0_j and GEMM1_(j-1) back to back) or were held, as its issue was,
/// by the same K landing (every warpgroup that waited at K_j's full barrier leaves it together); else
/// it starts a batch of its own behind the others: a GEMM issued alone is served in issue order, as a
/// warpgroup's wgmmas reach the pipe behind the ones already there. Inside a batch the warpgroups take
/// the pipe one wgmma each in turn (each warpgroup's own GEMMs in issue order), so warpgroups a landing
/// released together end their GEMMs together, each later than alone. The measured facts
/// (docs/model.md "The one-stage ring alone, measured"): with one stage every warpgroup waits for each
/// landing, and `scripts/gpu/ring_per_sm.cu`'s real wgmmas lose 7.9% at FA3's d 64 proportions where a
/// pipe serving one warpgroup at a time loses 0.5% (tests/data/gpu_ceilings/h100_ring_per_sm.json).
/// Not shared: GEMMs merely in the pipe together (no ping-pong; GEMM1 after the softmax without
/// intra-warpgroup overlap): sharing those too locks the timeline's identical warpgroups in step from
/// a tile's start, at 0.72-0.80 of FA3's speed without ping-pong where the kernel measures 0.91-1.01
/// (docs/model.md "Timeline, event by event"). Times in seconds; no constant of its own.
class TensorPipe {
 public:
  struct Piece {  // a stretch of service of one GEMM (the unit lane's spans; never two at once)
    double start = 0, end = 0;
    int tag = -1;
  };
  /// Adds a GEMM tagged `tag` (its completion event) of `work` seconds in `wgmmas` instructions,
  /// issued by `agent` at the time the pipe was last advanced to; `landing`: the K full barrier whose
  /// landing held its issue (its warpgroup waited there), -1 if none did.
  void add(int tag, int agent, double work, int wgmmas, int landing);
  /// The time `tag`'s GEMM would end if no other GEMM were added (it must be in the pipe).
  double tentative(int tag) const;
  /// Runs the pipe to time t (not before the last time it was run to): the GEMMs that end by then are
  /// appended to `done` (tag, end), the service to `pieces`.
  void advance(double t);
  /// Runs the pipe until `tag`'s GEMM has ended (with no GEMM added meanwhile; it must be in the pipe).
  void finish(int tag);
  double now() const { return s_.t; }

  std::vector<std::pair<int, double>> done;
  std::vector<Piece> pieces;

 private:
  struct Job {
    int tag = -1, agent = -1;
    int left = 0;        // wgmma instructions not yet served
    double each = 0;     // seconds one of them takes at the whole rate
  };
  struct Batch {
    int owner = -1, landing = -1;
    std::vector<Job> jobs;   // issue order
    std::vector<int> ring;   // its warpgroups in order of their first GEMM in it
    std::size_t next = 0;    // the ring's next warpgroup to serve
  };
  struct State {
    std::deque<Batch> q;
    double t = 0;             // the time run to
    double busy_until = -1;   // the wgmma in service ends then (-1: none)
    int busy_tag = -1;        // ... of this GEMM
  };
  // runs `s` to time t or to its next GEMM's end, whichever is first; returns the GEMM that ended
  // (its tag; -1 if none) and its time through `end`; records the service in `out` if given
  static int step(State& s, double t, double& end, std::vector<Piece>* out);

  State s_;
  mutable std::vector<std::pair<int, double>> cache_;  // tentative ends, valid until a GEMM is added or ends
};

}  // namespace flashlab::time_detail
