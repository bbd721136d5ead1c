// config.hpp — what a user asks for (Config) and the validated problem the simulator runs (Problem).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flashlab/config/gpu_spec.hpp"
#include "flashlab/contract/algo.hpp"
#include "flashlab/contract/tiling.hpp"

namespace flashlab {

/// Input element type; accumulation is always fp32.
enum class Dtype : std::uint8_t { fp16 = 0, bf16 = 1, fp32 = 2 };

/// How the warps of a thread block share a tile: split-K (V1: warps own column slices of S_ij)
/// or split-Q (V2: warps own row slices).
enum class WarpSplit : std::uint8_t { split_q = 0, split_k = 1 };

/// The loop order of a tiled forward (`--order`): kv-outer keeps O_i, l_i, m_i in HBM, read and
/// written at every step (FA1 Alg. 1 lines 8, 12-13); q-outer keeps them on chip, writes O_i once
/// and saves L_i (FA2 Alg. 1 lines 4-15).
enum class LoopOrder : std::uint8_t { kv_outer = 0, q_outer = 1 };

/// The grid of a tiled forward (`--grid`): one thread block per (batch, head) walking every tile
/// (FA1 §3.1), or one per (batch, head, Q block) walking its row of tiles (FA2 §3.2; for the K/V
/// outer order FA1's released code).
enum class GridKind : std::uint8_t { head = 0, q_block = 1 };

/// When O is normalised (`--rescale`): at every step (FA1 Alg. 1 line 12, diag(l_new)^-1 on each
/// update) or once at the end (FA2 Alg. 1 line 12, one division per element of O).
enum class Rescale : std::uint8_t { step = 0, delayed = 1 };

/// Which pass a configuration runs (`--pass`): the forward (O and L from Q, K, V), the backward
/// (dQ, dK, dV from dO, with the forward's O and its statistics given in HBM: FA1 Alg. 4, FA2
/// Alg. 2), or both, the forward's launches then the backward's.
enum class Pass : std::uint8_t { forward = 0, backward = 1, both = 2 };

/// V2's backward (`--backward-form`): as FA2's released kernels run it (three launches: D and the
/// zeroed fp32 dQ accumulator, the main kernel adding dQ_i with atomics, the conversion to dQ) or
/// as FA2 Alg. 2 prints it (D written first, then dQ_i read and written back at every step), or
/// as FA2's kernels run it with `deterministic=True` (mha_bwd: nsplits = ceil(SMs / (batch x
/// heads)) thread blocks per (batch, head), thread block s walks K/V blocks s, s + nsplits, ...
/// and adds dQ_i into its own fp32 slice s of dQacc; the convert launch sums the slices in order).
enum class BackwardForm : std::uint8_t { released = 0, paper = 1, deterministic = 2 };

/// Whose launch choices a configuration takes (`--kernel`): this project's kernels' (the flags as
/// given, FA2's tile per d by default), or what FA2's mha_fwd launches for the call (PyTorch's
/// scaled_dot_product_attention, flash backend): its tile per d, the split-KV decision
/// (num_splits_heuristic) and, for a decode step with grouped queries, the query heads of a K/V
/// head folded into the rows (resolve() says how); with `--pass backward`, what FA2's mha_bwd
/// launches: its three kernels on its backward tile and warps (fa2_backward_traits,
/// make_fa2_backward_schedule).
enum class Kernel : std::uint8_t { flashlab = 0, fa2 = 1 };

/// Who hands the thread blocks of V3's launch their work tiles (`--scheduler`): one thread block
/// per (batch, head, Q block) as V2's grid (FA3's SingleTileScheduler), or one per SM, each walking
/// tiles blockIdx.x, blockIdx.x + SMs, ... (FA3's StaticPersistentTileScheduler; hopper/
/// tile_scheduler.hpp), with causal masks the longest Q blocks first (FA3's LPT order for causal).
enum class TileScheduler : std::uint8_t { grid = 0, persistent = 1 };

/// The switches of V3, FA3's Hopper schedule of V2's loop (docs/model.md "V3"; FA3 paper §3.1-3.2):
///  warp_specialize: a producer warp issues the TMA loads, the consumer warpgroups only compute
///    (FA3 §3.1 "Producer-Consumer asynchrony"); off: consumer warpgroup 0 issues them itself.
///  stages: K/V buffers in the stage ring, 1 to 3 (FA3's kStages = 2, flash_fwd_launch_template.h).
///  pingpong: consumer warpgroups take turns on the tensor cores through named barriers (FA3 §3.1
///    "Pingpong scheduling"); needs two or more consumer warpgroups.
///  intra_overlap: within a warpgroup, GEMM1 (P V) of K/V block j is issued in the step of block
///    j + 1, after its GEMM0 (Q K^T), so that softmax overlaps it (FA3 §3.2, Algorithm 2).
///  scheduler: grid or persistent (TileScheduler).
struct HopperSwitches {
  bool warp_specialize = true;
  int stages = 2;
  bool pingpong = true;
  bool intra_overlap = true;
  TileScheduler scheduler = TileScheduler::persistent;
  bool operator==(const HopperSwitches&) const = default;
};

/// FA3's defaults for head dim d, B_r rows per Q block (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp
/// UseSchedulerBarrier, flash_fwd_launch_template.h kStages and UsePersistentScheduler): warp
/// specialization on, 2 stages, intra-warpgroup overlap on, ping-pong where there are two or more
/// consumer warpgroups (B_r / 64) and d <= 128, the persistent scheduler.
HopperSwitches fa3_switches(std::int64_t d, std::int64_t b_r);

/// FA3's forward tile on Hopper for fp16/bf16 inputs of head dim d (hopper/tile_size.h
/// tile_size_fwd_sm90 with headdim_v = d, no paged KV, no softcap): {B_r, B_c}.
/// d <= 64: 192 x 192 (causal or window: 192 x 128); d <= 96: 192 x 144 (window: 192 x 128);
/// d <= 128: 128 x 176 (causal or window: 128 x 128); d <= 192: 128 x 112 (window: 128 x 96);
/// larger: 128 x 80 (window: 128 x 64). Where P lives on that tile: fa3_p_in_registers(d, B_c).
/// Requires 1 <= d <= 256.
struct Fa3Tile {
  std::int64_t b_r = 0, b_c = 0;
};
Fa3Tile fa3_forward_tile(std::int64_t d, MaskKind mask);

/// Whether P_ij stays in registers as GEMM1's A operand (MmaPV_is_RS) for a tile of B_c columns at
/// head dim d, else FA3 writes it to shared memory (hopper/tile_size.h tile_size_fwd_sm90: at
/// d <= 64 RS exactly where it picks B_c = 128, use_blockN_128 — the 192 x 192 no-mask tile's scores
/// leave no registers for P — never at d <= 96, always above). Tied to the tile, not to the mask:
/// a 192 x 128 tile at d = 64 keeps P in registers with or without one, as FA3's causal tile and
/// scripts/gpu/v3_kernel's kernel (RS at every tile) do.
bool fa3_p_in_registers(std::int64_t d, std::int64_t b_c);

/// The five switches of a tiled forward (docs/model.md "Variants"). V1 and V2 are two of the
/// 32 corners (preset_switches); every other combination is a variant between them.
struct Switches {
  LoopOrder order = LoopOrder::q_outer;
  GridKind grid = GridKind::q_block;
  Rescale rescale = Rescale::delayed;
  WarpSplit split = WarpSplit::split_q;
  bool block_skip = true;
  bool operator==(const Switches&) const = default;
};

/// The switches of `--algo a`: v1 = kv-outer, head, step, split-k, block skip off (FA1 Alg. 1 and
/// the V1 paper's dense kernel); v2 = q-outer, qblock, delayed, split-q, block skip on (FA2 Alg. 1).
/// Standard attention walks no tiles: its order, grid and rescale are unused (v2's), its split
/// split-q and block skip off.
Switches preset_switches(Algo a);

/// One step of the walk from V1 to V2 (`flashlab explain`, lab 06): the change it adds, a short
/// key, and the switches with every change so far turned on.
struct WalkStep {
  std::string what;  // "+ delayed rescaling"
  std::string key;   // "rescale"
  Switches switches;
};
/// V1's switches, then one change at a time in the order the seed ranks their impact: loop order
/// (FA2 §3.2's Q outer loop, O_i on chip), one thread block per Q block (§3.2's parallelism over
/// the sequence), delayed rescaling (§3.1), split-Q warps (§3.3), block skip (§3.1.1). The last
/// step is preset_switches(Algo::v2); six steps.
std::vector<WalkStep> v1_to_v2_walk();

/// A configuration as a user gives it. Unset optionals take their defaults in resolve(). What each
/// field means to a user, the values it takes and its default are in field_docs.hpp (one entry per
/// flag, read by --help, the viewer and Python); the comments here say how a field is held.
struct Config {
  Algo algo = Algo::v2;
  std::int64_t n_q = 1024;          // N_q
  std::int64_t n_k = 1024;          // N_k
  std::int64_t d = 64;
  std::optional<std::int64_t> b_r;  // B_r; unset: default_blocks()
  std::optional<std::int64_t> b_c;  // B_c
  bool auto_blocks = false;         // `--br auto` / `--bc auto`: the V1 paper's rule (FA1 Alg. 1 line 1)
  std::optional<std::int64_t> sram_bytes;  // M, bytes; unset: the GPU preset's smem_per_block
  std::int64_t batch = 1;
  std::int64_t heads = 1;
  std::optional<std::int64_t> kv_heads;  // H_k; unset: heads
  Dtype dtype = Dtype::fp16;
  Mask mask;
  std::optional<bool> block_skip;   // unset: the algorithm's preset (preset_switches)
  std::optional<double> scale;      // unset: 1/sqrt(d)
  std::optional<int> warps;         // unset: default_warps()
  std::optional<WarpSplit> split;   // `--warp-split`; unset: the algorithm's preset
  std::optional<LoopOrder> order;   // unset: the algorithm's preset
  std::optional<GridKind> grid;     // unset: the algorithm's preset
  std::optional<Rescale> rescale;   // unset: the algorithm's preset
  // V3's switches (HopperSwitches); unset: FA3's (fa3_switches). Refused with another algorithm.
  std::optional<bool> warp_specialize;
  std::optional<int> stages;
  std::optional<bool> pingpong;
  std::optional<bool> intra_overlap;
  std::optional<TileScheduler> scheduler;
  Pass pass = Pass::forward;
  BackwardForm backward_form = BackwardForm::released;
  std::optional<std::int64_t> splits;  // 0 = auto (split_heuristic); unset: 1, or auto with Kernel::fa2
  Kernel kernel = Kernel::flashlab;
  std::string gpu = "h200";         // a GPU preset's name (presets.hpp)
};

/// A switch given that the algorithm does not take: its flag ("order", "block-skip"), the value
/// given, and why (which algorithms take it).
struct UntakenSwitch {
  std::string flag, value, why;
};
/// The first of --order, --grid, --rescale, --warp-split, --block-skip given in c (set in the
/// Config) that c.algo does not take: V1 and V2 take all five; V3 takes --block-skip (on only,
/// resolve_v3.cpp), none of the others (FA3 keeps FA2's loop); standard attention none (it walks
/// no tiles). resolve() refuses it (ConfigError(flag, value, "none with --algo A: " + why)).
std::optional<UntakenSwitch> untaken_switch(const Config& c);

/// c with the switches that c.algo does not take (untaken_switch) unset: all of them (`all`: one
/// algorithm of a command that runs several, with_algo, where the switch is the others'), or those
/// holding the algorithm's preset value (`preset_values`: a config written back from a Problem —
/// trace.hpp resolved_config, count --json's "config" — names every switch; other values are kept,
/// for resolve() to refuse).
enum class Untaken { all, preset_values };
Config without_untaken_switches(Config c, Untaken which);

/// c with algo v1 and the switches s (every other field as given): a step of v1_to_v2_walk().
Config with_switches(Config c, const Switches& s);

/// A validated, fully resolved configuration. Every field is concrete.
struct Problem {
  Algo algo = Algo::v2;
  Tiling tiling;
  Mask mask;
  Band band;
  std::int64_t batch = 1, heads = 1;
  std::int64_t kv_heads = 1;        // H_k: query head h reads K/V head h / (heads / H_k) (GQA)
  Dtype dtype = Dtype::fp16;
  int e_in = 2;                     // bytes per element of Q K V O S P
  bool block_skip = true;
  double scale = 0.125;
  int warps = 4;
  WarpSplit split = WarpSplit::split_q;
  LoopOrder order = LoopOrder::q_outer;   // V1 / V2 only (standard attention: unused)
  GridKind grid = GridKind::q_block;
  Rescale rescale = Rescale::delayed;
  HopperSwitches hopper;            // V3 only (other algorithms: unused)
  Pass pass = Pass::forward;
  BackwardForm backward_form = BackwardForm::released;
  std::int64_t splits = 1;          // splits of the K/V blocks (> 1: split-KV, schedule.hpp make_schedule)
  std::int64_t dq_splits = 1;       // the deterministic backward's dQ slices (FA2's nsplits): ceil(SMs /
                                    // (batch x heads)) thread blocks per (batch, head), a slice of dQacc
                                    // each; 1 otherwise
  Kernel kernel = Kernel::flashlab;
  bool folded = false;              // --kernel fa2 decode with grouped queries: heads = H_k, N_q = group
  std::int64_t sram_capacity = 0;   // M, bytes
  GpuSpec gpu;

  std::int64_t bh() const { return batch * heads; }
  /// Query heads per K/V head: heads / H_k (1 without grouped queries).
  std::int64_t group() const { return heads / kv_heads; }
  Switches switches() const { return {order, grid, rescale, split, block_skip}; }
  /// Sets the five switches to s (switches() returns them).
  void set_switches(const Switches& s) {
    order = s.order;
    grid = s.grid;
    rescale = s.rescale;
    split = s.split;
    block_skip = s.block_skip;
  }
  bool forward() const { return pass != Pass::backward; }   // runs the forward's launches
  bool backward() const { return pass != Pass::forward; }   // runs the backward's launches
  /// This problem with pass = forward: its forward's launches alone are make_schedule(p.forward_only())
  /// (a --pass both run's backward starts after them).
  Problem forward_only() const {
    Problem f = *this;
    f.pass = Pass::forward;
    return f;
  }
  /// Whether the switches are those of the algorithm's preset (`--algo v1` / `--algo v2` as is).
  bool is_preset() const { return algo == Algo::standard || switches() == preset_switches(algo); }
  /// V3's consumer warpgroups: B_r / 64 (each owns 64 rows of the Q block; 0 for other algorithms).
  std::int64_t consumer_groups() const { return algo == Algo::v3 ? tiling.b_r / 64 : 0; }
};

/// The ranges resolve() accepts (the command-line flags quote them in their errors).
inline constexpr std::int64_t kMaxSeq = (std::int64_t(1) << 31) - 1;  // N_q, N_k, batch, heads: events store 32 bits
inline constexpr std::int64_t kMaxD = 4096;                          // d
inline constexpr std::int64_t kMaxBlock = std::int64_t(1) << 16;      // B_r, B_c
inline constexpr std::int64_t kMaxSram = std::int64_t(1) << 40;       // M, bytes
inline constexpr std::int64_t kMaxTiles = std::int64_t(1) << 30;      // T_r * T_c: the executor walks every tile
/// Exact counting: batch*heads*(N_q*N_k*(d+1) + (T_c*N_q + T_r*N_k)*(d+2)) must be below this
/// (64 times the sum bounds every counter, which must stay below 2^63).
inline constexpr std::uint64_t kMaxCountSum = std::uint64_t(1) << 57;

/// Bytes per element of the input type: 2 for fp16/bf16, 4 for fp32.
int element_bytes(Dtype t);

/// FA2's forward tile for head dim d on Hopper (the kernels PyTorch 2.11 runs, tests/data/pytorch_fa2_h200_ncu.md):
/// d <= 64: 128 x 128; d <= 128: 128 x 64; larger: 64 x 64. Returns {B_r, B_c}. With
/// pass = backward, FA2's backward tile (fa2_backward_traits): d <= 64: 128 x 128, d <= 128:
/// 64 x 128, larger: 64 x 64 (`--pass both` runs both passes on the forward's tile).
/// resolve() halves a backward default (B_c first, then B_r, down to 16) until it fits the SRAM
/// (fp32 inputs; V1's backward keeps every tile in SRAM).
std::pair<std::int64_t, std::int64_t> default_blocks(std::int64_t d, Pass pass = Pass::forward);

/// FA2's backward kernel traits for head dim d on Hopper (Flash_bwd_kernel_traits<kHeadDim, kBlockM,
/// kBlockN, kNWarps, AtomLayoutMSdP, ...>, chosen by run_mha_bwd_hdim* in FA2's
/// flash_bwd_launch_template.h for a GPU with at least 144 KiB of shared memory per block; the names
/// PyTorch 2.11's launches carry on the H200, tests/data/gpu_time/h200.json): kHeadDim is d rounded
/// up to 32, 64, 96, 128, 160, 192, 224 or 256; B_r x B_c = 128 x 128 (kHeadDim <= 64), 64 x 128
/// (<= 128), 64 x 64 (larger); 8 warps; AtomLayoutMSdP warps along the rows of S = Q K^T (4, or 2 for
/// kHeadDim 96 and 128), the other warps / AtomLayoutMSdP along its keys. Requires 1 <= d <= 256.
struct Fa2BackwardTraits {
  std::int64_t head_dim = 0, b_r = 0, b_c = 0, warps = 8, atom_m_sdp = 4;
  /// Warps side by side along the keys of S_ij: each of them reads L_i and D_i of its rows itself.
  std::int64_t warp_columns() const { return warps / atom_m_sdp; }
};
Fa2BackwardTraits fa2_backward_traits(std::int64_t d);

/// Warps per thread block when `--warps` is not given: FA2's (fa2_backward_traits(d).warps, 8) where
/// V2's backward runs on FA2's backward tile, the default one (default_blocks with pass = backward),
/// up to d = 128 (the head dims the backward kernels compile it at); 4 otherwise.
int default_warps(Algo algo, Pass pass, std::int64_t d, std::int64_t b_r, std::int64_t b_c);

/// FA2's split-KV tile for head dim d (run_mha_fwd_splitkv_dispatch, flash_api.cpp
/// set_params_splitkv): B_r = 64 and B_c = 256 (d <= 64), 128 (d <= 128), 64 (larger).
std::pair<std::int64_t, std::int64_t> split_blocks(std::int64_t d);

/// FA2's num_splits_heuristic (csrc/flash_attn/flash_api.cpp), for `--splits auto`: with
/// `work` = batch x heads x Q blocks thread blocks, `slots` = thread blocks the GPU runs at once
/// (FA2 passes 2 x SMs) and `kv_blocks` = T_c: 1 when work >= 0.8 slots; otherwise, among the
/// split counts s <= min(max_splits, slots, kv_blocks) that change ceil(kv_blocks / s), the
/// smallest whose wave efficiency (work s / slots) / ceil(work s / slots) is at least 0.85 of the
/// best. Returns s >= 1.
std::int64_t split_heuristic(std::int64_t work, std::int64_t slots, std::int64_t kv_blocks, std::int64_t max_splits = 128);

/// standard, v1, v2 — the order every multi-algorithm report uses (compare, run, sweep).
const std::vector<Algo>& all_algos();

/// c with algo a, for one algorithm of a command that runs several (`run --algo`, `sweep --algos`,
/// `compare`): --backward-form is V2's, so standard attention and V1 take released when v2 is among
/// `algos`. Without v2 the form stays, and resolve() refuses it for them, naming the field. With
/// several algorithms, a switch a does not take is dropped for a (untaken_switch: `compare
/// --block-skip on` switches V1's and V2's; standard attention has none).
Config with_algo(Config c, Algo a, const std::vector<Algo>& algos);

/// Names used in output and parsing.
std::string_view to_string(Algo a);
std::string_view to_string(Dtype t);
std::string_view to_string(WarpSplit s);
std::string_view to_string(LoopOrder o);  // "kv-outer", "q-outer"
std::string_view to_string(GridKind g);   // "head", "qblock"
std::string_view to_string(Rescale r);    // "step", "delayed"
std::string_view to_string(Pass p);       // "forward", "backward", "both"
std::string_view to_string(BackwardForm f);  // "released", "paper", "deterministic"
std::string_view to_string(Kernel k);        // "flashlab", "fa2"
std::string_view to_string(TileScheduler s); // "grid", "persistent"
std::string_view on_off(bool v);              // a switch as its flag takes it: "on", "off"
std::string to_string(const Mask& m);  // "none", "causal", "causal-br", "window:L,R"

/// Parsers for the command line; throw ConfigError(field, text, allowed).
Algo parse_algo(std::string_view text);
Dtype parse_dtype(std::string_view text);
Mask parse_mask(std::string_view text);
WarpSplit parse_warp_split(std::string_view text);  // split-q | split-k (--warp-split)
LoopOrder parse_order(std::string_view text);    // kv-outer | q-outer
GridKind parse_grid(std::string_view text);      // head | qblock
Rescale parse_rescale(std::string_view text);    // step | delayed
bool parse_block_skip(std::string_view text);    // on | off
Pass parse_pass(std::string_view text);          // forward | backward | both
BackwardForm parse_backward_form(std::string_view text);  // released | paper | deterministic
Kernel parse_kernel(std::string_view text);      // flashlab | fa2
std::int64_t parse_splits(std::string_view text);  // auto (0) | an integer from 1 to 128
bool parse_on_off(std::string_view field, std::string_view text);  // on | off, errors naming `field`
int parse_stages(std::string_view text);         // 1 | 2 | 3 (--stages)
TileScheduler parse_scheduler(std::string_view text);  // grid | persistent

}  // namespace flashlab
