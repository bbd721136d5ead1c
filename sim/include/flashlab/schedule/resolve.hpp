// resolve.hpp — a Config checked and resolved into a Problem (resolve()), and the tile fitting it
// does: which B_r x B_c fit the SRAM. The bytes a tile needs in SRAM are the schedule's rule
// (schedule.hpp sram_bytes), so resolving sits above the schedule; the Config and Problem types,
// the ranges (kMax*) and the defaults resolve() starts from are config.hpp's.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "flashlab/config/config.hpp"

namespace flashlab {

/// Whether tiles of B_r x B_c fit in `capacity` bytes of SRAM: the bytes the schedule of `algo`
/// with switches `v` keeps in SRAM (schedule.hpp sram_bytes: the K/V outer order holds S_ij
/// there, the Q outer order does not) for the tile as it is held (min(B_r, N_q) x min(B_c, N_k):
/// a tile larger than the matrix holds the matrix) <= capacity. The one test resolve() and
/// auto_blocks() both apply.
/// With a pass that includes the backward, the backward's launches count too (their SRAM: K_j,
/// V_j, Q_i, dO_i and the B_r x B_c tiles of P and dS).
bool tile_fits(Algo algo, const Switches& v, std::int64_t b_r, std::int64_t b_c, std::int64_t n_q, std::int64_t n_k, std::int64_t d,
               int e_in, std::int64_t capacity, Pass pass = Pass::forward, BackwardForm form = BackwardForm::released);


/// Block sizes for `--br auto --bc auto`, {B_r, B_c}. First the V1 paper's rule from SRAM size M
/// (FA1 Alg. 1 line 1, M = capacity / e_in elements): B_c = ceil(M / (4d)), B_r = min(B_c, d), with
/// B_c at most kMaxBlock; for V2 both rounded down to multiples of 16, at least 16 (the kernels'
/// MMA tiles). When these do not fit (tile_fits: the paper's M/(4d) ignores S_ij, which the V1
/// paper's SRAM holds), B_c shrinks — by 1, by 16 for V2 — with B_r = min(B_c, d) rounded the same
/// way, down to the largest that fits. Throws ConfigError("sram", capacity, "at least <bytes> ...")
/// when not even the smallest tile (1 x 1; 16 x 16 for V2) fits.
std::pair<std::int64_t, std::int64_t> auto_blocks(Algo algo, const Switches& v, std::int64_t n_q, std::int64_t n_k, std::int64_t d,
                                                  int e_in, std::int64_t capacity, Pass pass = Pass::forward,
                                                  BackwardForm form = BackwardForm::released);

/// Validates `c` and fills in defaults. Splits: `--splits N` (1 to 128) or auto (0) split V2's K/V
/// loop (algo v2, order q-outer, grid qblock, rescale delayed, pass forward); auto applies
/// split_heuristic(batch x heads x T_r, 2 x SMs, T_c); with splits other than 1 and no block sizes
/// given, the tile is split_blocks(d) (auto: split_blocks when the heuristic splits, else the
/// default). `--kernel fa2` (algo v2 with V2's preset switches, pass forward or backward, d <= 256,
/// fp16 or bf16, a bottom-right causal mask if any) with pass forward: splits auto unless given;
/// for N_q = 1 the mask is dropped (FA2 sets causal false for one query: bottom-right, it sees
/// every key) and, with grouped queries and no window, the group's query heads become its rows
/// (FA2's seqlenq_ngroups_swapped: heads = H_k, N_q = heads / H_k, folded). With pass backward:
/// splits 1, FA2's backward tile and 8 warps (fa2_backward_traits), and only the released form, d a
/// multiple of 8, a group of heads that divides N_k d e_in, --br/--bc left out or FA2's own tile (what
/// a trace header names) and --warps 8 (or the default) are accepted. A backward (pass backward or
/// both) of V1 or V2 takes its algorithm's own --order (V2: q-outer, whose forward writes the L its
/// backward reads; V1: kv-outer, l and m). A switch the algorithm does not take (config.hpp
/// untaken_switch) is refused.
/// Throws ConfigError naming the field, the value and what
/// is allowed: sizes outside the k* ranges above (B_r > N_q is allowed: ragged), warps outside
/// [1, 32], negative window sides, unknown GPU, more than kMaxTiles tiles, tiles over the SRAM
/// capacity (the bytes the schedule keeps in SRAM, the capacity and the largest square tiles that fit, or that
/// none does), counts that overflow 64 bits (kMaxCountSum), auto block sizes when no tile fits.
Problem resolve(const Config& c);

/// The first switch of --algo v3 (FA3's Hopper schedule) that c sets — --warp-specialize, --stages,
/// --pingpong, --intra-overlap, --scheduler — as {flag without its dashes, value as typed back}; {"", ""}
/// when c sets none. resolve() refuses them for any other algorithm.
std::pair<std::string, std::string> hopper_switch_given(const Config& c);

/// resolve(c) with c.algo = a. A ConfigError is rethrown with " (algo <a>, <context>)" added to
/// its field: the algorithm only when another algorithm accepts the config (the SRAM tiles of
/// standard attention are smaller), the context (e.g. a sweep point) when given.
Problem resolve_algo(Config c, Algo a, const std::string& context = "");

}  // namespace flashlab
