// block_deal.hpp — how the time model deals a launch's thread blocks to the SMs' slots (private to
// sim/src/time; docs/model.md "Time model", the launch rule): dispatch order to the first free slot,
// or FA3's persistent scheduler (one thread block per SM walking its tiles, static or longest first).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab::time_detail {

/// Blocks dealt one by one; past this many (more than `slots`), deal and deal_persistent (longest first;
/// its static deal is summed in closed form at any size) deal the first
/// (batch, head) pairs that fill it and add each later pair's summed time spread over the slots, which
/// every slot keeps busy until the last blocks are dealt: the latest finish then differs from the one by
/// one by less than the longest block, and a count over 10^11 (batch, head) pairs takes a second, not an hour.
inline constexpr std::int64_t kDealtExactly = std::int64_t(1) << 22;

/// The blocks of a launch (`dur`: one (batch, head)'s blocks in seconds, repeated bh times) dealt in
/// dispatch order to the first free of `slots`: the latest finish and the blocks' summed time (seconds).
std::pair<double, double> deal(const std::vector<double>& dur, std::int64_t bh, std::int64_t slots);

/// A persistent launch's tiles (Launch::persistent: V3 under FA3's persistent scheduler) dealt to its
/// `ctas` thread blocks, one per SM, as scripts/gpu/v3_kernel/v3_forward.cuh deals them: tile t of the
/// bh x T_r tiles is (batch, head) t / T_r's Q block t mod T_r, the last Q block first where the
/// launch walks them descending (`longest_first`: causal, whose longest Q blocks are the last). Without
/// it thread block c takes tiles c, c + ctas, ... (static); with it each tile goes to the first thread
/// block free (the kernel's atomic tile counter). `dur`: one (batch, head)'s tile times by Q block;
/// each thread block's first tile also waits `first_trip` (its Q_i's round trip). The latest finish
/// and the blocks' summed time.
std::pair<double, double> deal_persistent(const std::vector<double>& dur, std::int64_t bh, std::int64_t ctas,
                                          bool longest_first, double first_trip);

/// Whether launch l deals its Q blocks (a grid dimension) from the last down (V3 causal: the longest
/// first), `dur` then being by Q block and the deal taking them in reverse.
bool descending_q_blocks(const Launch& l);

/// Launch l's blocks dealt to its slots: deal(), or a persistent launch's deal_persistent (whose
/// thread blocks each wait one round trip, `trip`, for their first tile's Q_i where the producer
/// prefetches the later ones: v3_work.hpp v3_step).
std::pair<double, double> deal_launch(const Problem& p, const Launch& l, const std::vector<double>& dur,
                                      std::int64_t slots, double trip);

/// One thread block of deal_shared: its index in dispatch order, its SM, and when it started and ended
/// (seconds).
struct DealtBlock {
  std::int64_t g = 0, sm = 0;
  double start = 0, end = 0;
};

/// A launch's blocks dealt to `sms` SMs of k slots each where the blocks on an SM share it (processor
/// sharing, docs/model.md "Time model", the launch rule): dur_by_n[n - 1] holds one (batch, head)'s
/// block times when n blocks share the SM (n = 1..k, seconds), `steps` its blocks' step counts. The
/// blocks go breadth first (one per SM, then a second, ...) and each freed slot takes the next; an SM's
/// n resident blocks each do 1 / dur(n) of their work per second, so a block that ends speeds up the
/// others. The last partial wave (fewer blocks left than SMs) is dealt one block per SM per step, as the
/// block scheduler spreads it (blocks sharing an SM end their last steps one after another, not at
/// once). The latest finish and the SMs' busy time (k x the time each SM holds a block); `trace`, where
/// given, receives every block (then dealt one by one at any size).
std::pair<double, double> deal_shared(const std::vector<std::vector<double>>& dur_by_n, const std::vector<double>& steps,
                                      std::int64_t bh, std::int64_t sms, std::int64_t k,
                                      std::vector<DealtBlock>* trace = nullptr);

}  // namespace flashlab::time_detail
