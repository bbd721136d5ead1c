// resolve.cpp — tile fitting and resolve(): a Config checked and resolved into a Problem
// (resolve.hpp). Tile fitting asks the schedule which tiles it keeps in SRAM (sram_bytes), so it
// sits with the schedule; the defaults it starts from are config.cpp's.
#include "flashlab/schedule/resolve.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/schedule.hpp"

#include "resolve_v3.hpp"

namespace flashlab {
namespace {

void require_range(const char* field, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi)
    throw ConfigError(field, std::to_string(v),
                      "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
}

// The pass and backward form a fit is checked for.
struct Passes {
  Pass pass = Pass::forward;
  BackwardForm form = BackwardForm::released;
};

// SRAM bytes the schedule of (a, v) keeps with rows x cols tiles (schedule.hpp sram_bytes: the
// Q outer order keeps S_ij/P_ij and O_i in registers, the K/V outer order keeps S_ij in SRAM).
// resolve() asks before the Problem exists: the schedule is that of a Problem with the fields
// make_schedule reads for it (algorithm, switches, pass, backward form; no split-KV).
std::int64_t sram_need(Algo a, const Switches& v, std::int64_t rows, std::int64_t cols, std::int64_t d, int e,
                       Passes ps) {
  Problem p;
  p.algo = a;
  p.set_switches(v);
  p.pass = ps.pass;
  p.backward_form = ps.form;
  return sram_bytes(make_schedule(p), rows, cols, d, e);
}

// Largest B <= kMaxBlock with B_r = B_c = B whose tiles fit in `capacity` bytes (0: none does).
std::int64_t largest_square_tile(Algo a, const Switches& v, std::int64_t n_q, std::int64_t n_k, std::int64_t d, int e,
                                 std::int64_t capacity, Passes ps) {
  std::int64_t lo = 0, hi = kMaxBlock;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi + 1) / 2;
    if (tile_fits(a, v, mid, mid, n_q, n_k, d, e, capacity, ps.pass, ps.form)) lo = mid; else hi = mid - 1;
  }
  return lo;
}

// What resolve() says about the largest square tile that fits, `fit` from largest_square_tile.
std::string square_tile_hint(Algo a, const Switches& v, std::int64_t d, int e, std::int64_t fit, Passes ps) {
  if (fit == 0)
    return "no tile fits: even B_r = B_c = 1 needs " + std::to_string(sram_need(a, v, 1, 1, d, e, ps)) + " bytes";
  if (fit < 16) return "the largest B_r = B_c that fits is " + std::to_string(fit) + " (no multiple of 16 fits)";
  return "the largest B_r = B_c that fits is " + std::to_string(fit) + " (multiple of 16: " +
         std::to_string(fit / 16 * 16) + ")";
}

std::string to_string_u128(unsigned __int128 v) {
  std::string s;
  do {
    s.insert(s.begin(), char('0' + int(v % 10)));
    v /= 10;
  } while (v != 0);
  return s;
}

// Shortest text that reads back as the same double ("0.125", "0", "1e-300").
std::string format_double(double v) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace

bool tile_fits(Algo algo, const Switches& v, std::int64_t b_r, std::int64_t b_c, std::int64_t n_q, std::int64_t n_k,
               std::int64_t d, int e_in, std::int64_t capacity, Pass pass, BackwardForm form) {
  return sram_need(algo, v, std::min(b_r, n_q), std::min(b_c, n_k), d, e_in, {pass, form}) <= capacity;
}

std::pair<std::int64_t, std::int64_t> auto_blocks(Algo algo, const Switches& v, std::int64_t n_q, std::int64_t n_k, std::int64_t d,
                                                  int e_in, std::int64_t capacity, Pass pass, BackwardForm form) {
  const std::int64_t step = algo == Algo::v2 ? 16 : 1;  // V2: the kernels' tiles are multiples of 16
  const auto fitted = [step](std::int64_t b) { return std::max(step, b / step * step); };
  const std::int64_t m = capacity / e_in;                                      // M in elements
  std::int64_t b_c = fitted(std::min(kMaxBlock, (m + 4 * d - 1) / (4 * d)));  // ceil(M / (4d))
  for (; b_c >= step; b_c -= step) {
    const std::int64_t b_r = fitted(std::min(b_c, d));  // B_r = min(B_c, d)
    if (tile_fits(algo, v, b_r, b_c, n_q, n_k, d, e_in, capacity, pass, form)) return {b_r, b_c};
  }
  const std::int64_t smallest = sram_need(algo, v, std::min(step, n_q), std::min(step, n_k), d, e_in, {pass, form});
  throw ConfigError("sram", std::to_string(capacity),
                    "at least " + std::to_string(smallest) + " bytes for --br auto --bc auto: the smallest tile, B_r = B_c = " +
                        std::to_string(step) + (step > 1 ? " (v2: multiples of 16)" : "") + ", needs " +
                        std::to_string(smallest) + " bytes at d = " + std::to_string(d));
}

namespace {

// What PyTorch's FA2 backward (mha_bwd, flash_api.cpp) takes as this model counts it: the released
// form (three launches, dQ through atomics), head dims that need no padding, FA2's own tile and
// warps; grouped K/V heads whose at::sum output (N_k x d per K/V head) divides into equal shares
// per query head (Action::per_kv_head). Throws ConfigError naming the field otherwise.
void check_fa2_backward(const Config& c, std::int64_t kv_heads) {
  const std::string with = " with --kernel fa2 --pass backward";
  if (c.backward_form != BackwardForm::released)
    throw ConfigError("backward-form", std::string(to_string(c.backward_form)),
                      "released" + with + " (what PyTorch's FA2 backward launches)");
  if (c.d % 8 != 0)
    throw ConfigError("d", std::to_string(c.d),
                      "a multiple of 8" + with + " (PyTorch pads other head dims with launches of its own, not modelled)");
  const std::int64_t group = c.heads / kv_heads;
  if (c.n_k * c.d * element_bytes(c.dtype) % group != 0)
    throw ConfigError("kv-heads", std::to_string(kv_heads),
                      "a number that makes heads / kv-heads divide N_k d e_in" + with +
                          " (each query head counts its share of at::sum's dK, dV of its K/V head)");
  const std::int64_t warps = fa2_backward_traits(c.d).warps;
  if (c.warps && *c.warps != warps)
    throw ConfigError("warps", std::to_string(*c.warps), std::to_string(warps) + with + " (FA2's backward kernels' warps)");
}

}  // namespace

namespace {

// resolve()'s steps, in the order it checks them (the first error found is the one thrown).

// The sizes, the GPU preset, the element type, the grouped K/V heads and the SRAM capacity.
void resolve_sizes(const Config& c, Problem& p) {
  require_range("nq", c.n_q, 1, kMaxSeq);
  require_range("nk", c.n_k, 1, kMaxSeq);
  require_range("d", c.d, 1, kMaxD);
  require_range("batch", c.batch, 1, kMaxSeq);
  require_range("heads", c.heads, 1, kMaxSeq);
  if (c.warps) require_range("warps", *c.warps, 1, 32);
  p.gpu = gpu_preset(c.gpu);
  p.dtype = c.dtype;
  p.e_in = element_bytes(c.dtype);
  p.batch = c.batch;
  p.heads = c.heads;
  // Grouped-query attention (GQA; MQA with one K/V head): heads / H_k query heads share a K/V head.
  p.kv_heads = c.kv_heads.value_or(c.heads);
  if (p.kv_heads < 1 || p.kv_heads > c.heads || c.heads % p.kv_heads != 0)
    throw ConfigError("kv-heads", std::to_string(p.kv_heads),
                      "an integer from 1 to heads (" + std::to_string(c.heads) + ") that divides heads");

  if (c.sram_bytes) require_range("sram", *c.sram_bytes, 1, kMaxSram);
  p.sram_capacity = c.sram_bytes.value_or(p.gpu.smem_per_block);
}

// The switches: each one given overrides that property of the algorithm's preset. A switch the
// algorithm does not take is refused (untaken_switch): it would be reported and have no effect.
void resolve_switches(const Config& c, Problem& p) {
  if (const std::optional<UntakenSwitch> u = untaken_switch(c))
    throw ConfigError(u->flag, u->value, "none with --algo " + std::string(to_string(c.algo)) + ": " + u->why);
  const Switches preset = preset_switches(c.algo);
  p.set_switches({.order = c.order.value_or(preset.order),
                  .grid = c.grid.value_or(preset.grid),
                  .rescale = c.rescale.value_or(preset.rescale),
                  .split = c.split.value_or(preset.split),
                  .block_skip = c.block_skip.value_or(preset.block_skip)});
  p.pass = c.pass;
  p.kernel = c.kernel;
}

// A backward reads the statistics its own forward writes (docs/model.md "Backward pass"): V2's
// (FA2 Alg. 2) reads L, which only the Q outer forward writes (FA2 Alg. 1 lines 12-15); V1's (FA1
// Alg. 4) reads l and m, which only the K/V outer forward writes (FA1 Alg. 1 lines 12-13). Another
// order leaves them unwritten (NaN in run, a read of what no launch wrote in count and trace).
void check_backward_order(const Config& c, const Problem& p) {
  if (c.pass == Pass::forward || (c.algo != Algo::v1 && c.algo != Algo::v2)) return;
  const LoopOrder own = preset_switches(c.algo).order;
  if (p.order == own) return;
  const bool v2 = c.algo == Algo::v2;
  throw ConfigError("order", std::string(to_string(p.order)),
                    std::string(to_string(own)) + " with --algo " + std::string(to_string(c.algo)) + " --pass " +
                        std::string(to_string(c.pass)) + ": " +
                        (v2 ? "V2's backward (FA2 Alg. 2) reads L, which only the Q outer forward writes "
                              "(the K/V outer forward writes l and m)"
                            : "V1's backward (FA1 Alg. 4) reads l and m, which only the K/V outer forward writes "
                              "(the Q outer forward writes L)") +
                        "; other orders run with --pass forward");
}

// --kernel fa2: what FA2's mha_fwd launches (flash_api.cpp), V2's forward with FA2's choices; may
// rewrite c's mask, N_q and heads as mha_fwd does.
void resolve_fa2_kernel(Config& c, Problem& p) {
  if (c.algo != Algo::v2 || !p.is_preset())
    throw ConfigError("kernel", "fa2", "with --algo v2 and V2's switches as preset (FA2's forward kernels are V2's)");
  if (c.pass == Pass::both)
    throw ConfigError("pass", "both",
                      "forward or backward with --kernel fa2 (FA2's forward and backward run on different tiles: "
                      "count them one at a time)");
  if (c.d > 256) throw ConfigError("d", std::to_string(c.d), "at most 256 with --kernel fa2 (FA2's largest head dim)");
  if (c.dtype == Dtype::fp32)
    throw ConfigError("dtype", "fp32", "fp16 or bf16 with --kernel fa2 (FA2's kernels take only those)");
  if (c.mask.kind == MaskKind::causal_tl && c.n_q != c.n_k)
    throw ConfigError("mask", "causal", "causal-br with --kernel fa2 and N_q != N_k (FA2's causal mask is bottom-right)");
  // the V1 paper's SRAM rule is no tile of FA2's kernels (an explicit --br/--bc is a what-if of its launch)
  if (c.auto_blocks)
    throw ConfigError("br/bc", "auto",
                      c.pass == Pass::backward
                          ? "FA2's own tile with --kernel fa2 --pass backward (leave --br and --bc out: kBlockM x kBlockN for d)"
                          : "FA2's own tile with --kernel fa2 (leave --br and --bc out: kBlockM x kBlockN for d), or B_r "
                            "and B_c as numbers");
  if (c.pass == Pass::backward) check_fa2_backward(c, p.kv_heads);
  if (c.pass == Pass::forward && c.n_q == 1 && (c.mask.kind == MaskKind::causal_tl || c.mask.kind == MaskKind::causal_br))
    c.mask = Mask{};  // mha_fwd: seqlen_q == 1 sets is_causal = false (bottom-right, one query sees every key)
  // seqlenq_ngroups_swapped: one query row per head, grouped heads, no window: the group's query
  // heads become the rows of one K/V head's problem (mha_fwd only)
  if (c.pass == Pass::forward && c.n_q == 1 && p.kv_heads < c.heads && c.mask.kind != MaskKind::window &&
      c.d % 8 == 0) {
    c.n_q = c.heads / p.kv_heads;
    c.heads = p.kv_heads;
    p.heads = p.kv_heads;
    p.folded = true;
  }
}

// The splits asked for (0: auto), checked: split-KV splits V2's forward only.
std::int64_t requested_splits(const Config& c, const Problem& p) {
  const std::int64_t want_splits = c.splits.value_or(c.kernel == Kernel::fa2 && c.pass == Pass::forward ? 0 : 1);
  const bool v2_loop = c.algo == Algo::v2 && p.order == LoopOrder::q_outer && p.grid == GridKind::q_block &&
                       p.rescale == Rescale::delayed && p.split == WarpSplit::split_q;
  if (const char* allowed = split_kv_refusal(want_splits, v2_loop, c.pass == Pass::forward))
    throw ConfigError("splits", want_splits == 0 ? "auto" : std::to_string(want_splits), allowed);
  return want_splits;
}

// The backward form: V2's backward only; the deterministic form's dQacc slices.
void resolve_backward_form(const Config& c, Problem& p) {
  p.backward_form = c.backward_form;
  if (c.backward_form != BackwardForm::released && c.pass == Pass::forward)
    throw ConfigError("backward-form", std::string(to_string(c.backward_form)),
                      "released (the default) with --pass forward: the form is V2's backward's (--pass backward or both)");
  if (c.backward_form != BackwardForm::released && c.algo != Algo::v2)  // paper too: it was silently ignored
    throw ConfigError("backward-form", std::string(to_string(c.backward_form)),
                      "with --algo v2 only (FA2's " +
                          std::string(c.backward_form == BackwardForm::paper ? "Algorithm 2 as printed" : "deterministic backward") +
                          "; --algo " + std::string(to_string(c.algo)) + " has one backward, its own)");
  // FA2's mha_bwd (flash_api.cpp): nsplits = ceil(SMs / (batch x heads)), one slice of dQacc each
  if (c.backward_form == BackwardForm::deterministic) p.dq_splits = (p.gpu.sms + c.batch * c.heads - 1) / (c.batch * c.heads);
}

// B_r x B_c: --br/--bc auto, explicit sizes, or the default tile (split-KV's tile where the forward
// splits, smaller where a backward's default does not fit).
std::pair<std::int64_t, std::int64_t> resolve_blocks(const Config& c, const Problem& p, std::int64_t want_splits) {
  const Switches v = p.switches();
  std::int64_t b_r, b_c;
  if (c.auto_blocks) {
    if (c.b_r || c.b_c)
      throw ConfigError("br/bc", "auto together with explicit sizes",
                        "either --br auto/--bc auto or explicit block sizes, not both");
    std::tie(b_r, b_c) = auto_blocks(c.algo, v, c.n_q, c.n_k, c.d, p.e_in, p.sram_capacity, c.pass, c.backward_form);
  } else {
    const bool split_tile = want_splits != 1 && !c.b_r && !c.b_c;
    auto def = split_tile ? split_blocks(c.d) : default_blocks(c.d, c.pass);
    if (split_tile && want_splits == 0) {
      // auto: FA2 sizes the split on its split tile and runs the non-split kernel when it gives 1
      const Tiling t{c.n_q, c.n_k, c.d, def.first, def.second};
      if (split_heuristic(c.batch * c.heads * t.t_r(), 2 * p.gpu.sms, t.t_c()) == 1) def = default_blocks(c.d, c.pass);
    }
    b_r = c.b_r.value_or(def.first);
    b_c = c.b_c.value_or(def.second);
    // FA2's backward tile holds more than its forward's (K_j, V_j, Q_i, dO_i and the tiles of P
    // and dS): where the default does not fit (fp32; V1, which keeps every tile in SRAM), halve
    // B_c, then B_r, down to 16, as FA2's launchers pick smaller tiles for less shared memory
    if (!c.b_r && !c.b_c && c.pass != Pass::forward)
      while (!tile_fits(c.algo, v, b_r, b_c, c.n_q, c.n_k, c.d, p.e_in, p.sram_capacity, c.pass, c.backward_form) &&
             (b_c > 16 || b_r > 16)) {
        if (b_c >= b_r && b_c > 16) b_c /= 2;
        else b_r /= 2;
      }
  }
  return {b_r, b_c};
}

// --kernel fa2 --pass backward: the tile is FA2's own, the one resolve_blocks picks with --br and
// --bc left out (kBlockM x kBlockN for d, fa2_backward_traits). Given sizes are accepted when they
// are that tile (resolved_config writes the tile into trace headers, count --json into its config).
void check_fa2_backward_tile(const Config& c, const Problem& p, std::pair<std::int64_t, std::int64_t> tile) {
  if (!c.b_r && !c.b_c) return;
  Config own = c;
  own.b_r.reset();
  own.b_c.reset();
  const auto [b_r, b_c] = resolve_blocks(own, p, 1);
  if (tile == std::pair{b_r, b_c}) return;
  throw ConfigError("br/bc", std::to_string(tile.first) + " x " + std::to_string(tile.second),
                    std::to_string(b_r) + " x " + std::to_string(b_c) +
                        " with --kernel fa2 --pass backward at d = " + std::to_string(c.d) +
                        ": FA2's own tile (kBlockM x kBlockN for d; leave --br and --bc out)");
}

// The mask: window sides checked, -1 resolved to no limit; the band of visible columns per row.
void resolve_mask(const Config& c, Problem& p) {
  p.mask = c.mask;
  if (c.mask.kind == MaskKind::window) {
    require_range("window left", c.mask.left, -1, kMaxSeq);
    require_range("window right", c.mask.right, -1, kMaxSeq);
    // -1: no limit on that side (FA2's window_size = (left, -1)), resolved as FA2's flash_api does
    // for the left side: N_k keys back reach key 0 from every row (c - r >= N_k - N_q - N_k = -N_q);
    // N_q keys ahead reach key N_k - 1 from every row.
    if (c.mask.left < 0) p.mask.left = c.n_k;
    if (c.mask.right < 0) p.mask.right = c.n_q;
  }
  p.band = make_band(p.mask, c.n_q, c.n_k);
}

// At most kMaxTiles tiles, and every counter exact in 64 bits.
void check_count_limits(const Config& c, const Problem& p) {
  const std::int64_t tiles = p.tiling.t_r() * p.tiling.t_c();
  if (tiles > kMaxTiles) {
    // the largest tile the algorithm takes (V3's, resolve_v3.hpp; the others: kMaxBlock)
    const bool v3 = p.algo == Algo::v3;
    const std::int64_t big_r = v3 ? v3_resolve::kMaxBr : kMaxBlock, big_c = v3 ? v3_resolve::kMaxBc : kMaxBlock;
    const auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
    const bool larger_fits = ceil_div(c.n_q, big_r) * ceil_div(c.n_k, big_c) <= kMaxTiles;
    throw ConfigError("tiles", "T_r*T_c = " + std::to_string(tiles),
                      "at most 2^30 tiles (the simulator walks each one); " +
                          (larger_fits ? std::string("raise --br/--bc")
                                       : "N_q x N_k is too large for the walk even at B_r x B_c = " +
                                             std::to_string(big_r) + " x " + std::to_string(big_c) + ": lower --nq/--nk/--seq"));
  }

  // The largest counters are bounded by 64 times this sum; it must stay below 2^63 (exact counting).
  using u128 = unsigned __int128;
  const u128 nq = u128(c.n_q), nk = u128(c.n_k), d = u128(c.d);
  const u128 sum = (nq * nk * (d + 1) + (u128(p.tiling.t_c()) * nq + u128(p.tiling.t_r()) * nk) * (d + 2)) *
                   u128(c.batch) * u128(c.heads);
  if (sum >= kMaxCountSum)
    throw ConfigError("batch*heads*(N_q*N_k*(d+1) + (T_c*N_q + T_r*N_k)*(d+2))", to_string_u128(sum),
                      "less than 2^57 = " + std::to_string(kMaxCountSum) +
                          ", so that every counter (at most 64 times this sum) fits in 64 bits; lower "
                          "--batch, --heads, --nq, --nk or --d");
}

// Tiles over the SRAM capacity: the bytes needed, the capacity, the largest tiles that fit.
void check_sram_fit(const Config& c, const Problem& p) {
  const Switches v = p.switches();
  const Passes ps{c.pass, c.backward_form};
  const std::int64_t b_r = p.tiling.b_r, b_c = p.tiling.b_c;
  if (!tile_fits(c.algo, v, b_r, b_c, c.n_q, c.n_k, c.d, p.e_in, p.sram_capacity, c.pass, c.backward_form)) {
    const std::int64_t need = sram_need(c.algo, v, std::min(b_r, c.n_q), std::min(b_c, c.n_k), c.d, p.e_in, ps);
    const std::int64_t fit = largest_square_tile(c.algo, v, c.n_q, c.n_k, c.d, p.e_in, p.sram_capacity, ps);
    throw ConfigError("br x bc", std::to_string(b_r) + " x " + std::to_string(b_c),
                      "tiles needing at most the SRAM capacity: these need " + std::to_string(need) +
                          " bytes, the capacity is " + std::to_string(p.sram_capacity) + " bytes; " +
                          square_tile_hint(c.algo, v, c.d, p.e_in, fit, ps));
  }
}

}  // namespace

Problem resolve(const Config& given) {
  Config c = given;
  Problem p;
  p.algo = c.algo;
  resolve_sizes(c, p);
  resolve_switches(c, p);
  check_backward_order(c, p);
  const bool v3 = c.algo == Algo::v3;
  if (v3) v3_resolve::check_config(c);
  else v3_resolve::refuse_hopper_switches(c);
  if (c.kernel == Kernel::fa2) resolve_fa2_kernel(c, p);
  const std::int64_t want_splits = requested_splits(c, p);
  resolve_backward_form(c, p);
  const auto [b_r, b_c] = v3 ? v3_resolve::blocks(c) : resolve_blocks(c, p, want_splits);
  if (c.kernel == Kernel::fa2 && c.pass == Pass::backward) check_fa2_backward_tile(c, p, {b_r, b_c});
  require_range("br", b_r, 1, kMaxBlock);
  require_range("bc", b_c, 1, kMaxBlock);
  p.tiling = Tiling{c.n_q, c.n_k, c.d, b_r, b_c};
  p.warps = c.kernel == Kernel::fa2 && c.pass == Pass::backward ? int(fa2_backward_traits(c.d).warps)
                                                                 : c.warps.value_or(default_warps(c.algo, c.pass, c.d, b_r, b_c));
  if (v3) v3_resolve::resolve_switches(c, p);  // the switches and the warps of FA3's warp roles
  p.splits = want_splits != 0 ? want_splits
                              : split_heuristic(c.batch * c.heads * p.tiling.t_r(), 2 * p.gpu.sms, p.tiling.t_c());

  resolve_mask(c, p);
  p.scale = c.scale.value_or(1.0 / std::sqrt(double(c.d)));
  if (!std::isfinite(p.scale) || p.scale <= 0)
    throw ConfigError("scale", format_double(p.scale), "a finite number > 0");

  check_count_limits(c, p);
  if (v3) v3_resolve::check_sram(p);
  else check_sram_fit(c, p);
  return p;
}

}  // namespace flashlab
