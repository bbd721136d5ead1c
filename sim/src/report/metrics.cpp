// metrics.cpp — the catalogue of metrics (metrics.hpp; docs/output.md lists it).
#include "flashlab/report/metrics.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "flashlab/contract/error.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/report/report_json.hpp"  // fits_on_sm
#include "flashlab/schedule/tensor_shape.hpp"

namespace flashlab::report {
namespace {

// What the catalogue reads from the counters, in one place: the counters' layout may change
// (per memory level), the catalogue's formulas do not.
std::uint64_t hbm(const Figures& f, Tensor t, Dir d) { return f.counters.cost.bytes(t, d); }
std::uint64_t hbm_read(const Figures& f) { return f.counters.cost.read_bytes(); }
std::uint64_t hbm_write(const Figures& f) { return f.counters.cost.write_bytes(); }
std::uint64_t hbm_atomic(const Figures& f) { return f.counters.cost.atomic_bytes(); }
std::uint64_t hbm_total(const Figures& f) { return hbm_read(f) + hbm_write(f) + hbm_atomic(f); }
std::uint64_t ops(const Figures& f, OpKind k) { return f.counters.cost.op(k); }
std::uint64_t all_ops(const Figures& f) {
  std::uint64_t s = 0;
  for (int k = 0; k < kOpKindCount; ++k) s += ops(f, OpKind(k));
  return s;
}
std::uint64_t flops(const Figures& f) { return f.counters.cost.flops; }
// Bytes at a memory level other than HBM (memory.hpp); none for the sector level when it was not
// counted (no SectorCounter attached: Counters::sectors).
bool level_counted(const Figures& f, Memory m) {
  if (m == Memory::sector) return f.counters.sectors;
  if (m == Memory::l2 || m == Memory::dram) return f.counters.l2;
  return true;
}
Value level_bytes(const Figures& f, Memory m, Tensor t, Dir d) {
  if (!level_counted(f, m)) return {};
  return Value::of(f.counters.bytes(m, t, d));
}
Value level_total(const Figures& f, Memory m, Dir d) {
  if (!level_counted(f, m)) return {};
  return Value::of(total(f.counters.levels[int(m)], d));
}
std::uint64_t u(std::int64_t v) { return std::uint64_t(v); }

// The warp model's sums over warps (none where the model does not apply).
template <class Field>
Value warp_sum(const Figures& f, Field field) {
  if (!f.warp_model) return {};
  std::uint64_t s = 0;
  for (const WarpWork& w : f.warps) s += field(w);
  return Value::of(s);
}
// Operations of kind k the warps do beyond the thread block's own count (the cross-warp combines
// of split-K); the warps' sums equal the block's counts under split-Q (docs/warps.md).
std::uint64_t extra(const Figures& f, OpKind k) {
  std::uint64_t s = 0;
  for (const WarpWork& w : f.warps) s += w.op(k);
  const std::uint64_t block = ops(f, k);
  return s > block ? s - block : 0;
}

std::string tensor_help(Tensor t, const char* verb) {
  return fmt::format("Bytes of {} {} HBM, all (batch, head) pairs ({}).", to_string(t), verb,
                     tensor_shape(t).fp32 ? "fp32, 4 bytes per element" : "e_in bytes per element");
}

std::string op_help(OpKind k) {
  switch (k) {
    case OpKind::exp: return "exp evaluations of the online softmax: P~ = exp(S - m) and the rescaling factors.";
    case OpKind::mul: return "Non-matmul multiplies: the scale of S, and V1 rescales O by l e^(m - m_new) every step.";
    case OpKind::div:
      return "Divisions: V1 divides every O element by l_new every step (FA1 Alg. 1 line 12), V2 and V3 once at the "
             "end (FA2 Alg. 1 line 12).";
    default:
      return fmt::format("Non-matmul {} operations of the softmax and the output updates (docs/model.md).",
                         to_string(k));
  }
}

// Appends one metric to the catalogue: the catalogue's sections below call it as add(...), one
// entry each, in the order `flashlab metrics` lists them.
struct Add {
  std::vector<Metric>& m;
  void operator()(std::string key, std::string path, std::string label, Unit unit, std::string help,
                  std::function<Value(const Figures&)> value, bool in_csv = true) const {
    m.push_back(Metric{std::move(key), std::move(path), std::move(label), unit, std::move(help), std::move(value),
                       in_csv});
  }
};

// A metric's value from an integer read off the figures, `get(f)`.
template <class Get>
auto integer(Get get) {
  return [get](const Figures& f) { return Value::of(get(f)); };
}

// HBM: the papers' "HBM accesses", global-memory requests (docs/model.md).
void hbm_metrics(const Add& add) {
  add("hbm_read_bytes", "hbm.total_read_bytes", "HBM read", Unit::bytes,
      "Bytes read from HBM, all (batch, head) pairs: V1 re-reads Q_i, O_i, l_i, m_i for every tile (FA1 Alg. 1 "
      "line 8), V2 and V3 read Q_i once per Q block (FA2 Alg. 1 line 4).",
      integer(hbm_read));
  add("hbm_write_bytes", "hbm.total_write_bytes", "HBM written", Unit::bytes,
      "Bytes written to HBM: V1 initialises O, l, m (FA1 Alg. 1 line 2) and writes them back after every tile "
      "(lines 12-13), V2 and V3 write O_i and L_i once (FA2 Alg. 1 lines 14-15), standard writes S, P and O "
      "(Alg. 0).",
      integer(hbm_write));
  add("hbm_atomic_bytes", "hbm.total_atomic_bytes", "HBM atomic adds", Unit::bytes,
      "Bytes added to HBM by atomic read-modify-writes (FA2's backward adds dQ_i into the fp32 accumulator "
      "dQacc; Nsight Compute counts them as reductions): 0 for every forward.",
      integer(hbm_atomic));
  add("hbm_total_bytes", "hbm.total_bytes", "HBM read + written", Unit::bytes,
      "Bytes read plus bytes written (plus atomic adds): the papers' HBM accesses.", integer(hbm_total));
  for (Dir dir : {Dir::read, Dir::write, Dir::atomic})
    for (int n = 0; n < kTensorCount; ++n) {
      const Tensor t = Tensor(n);
      // atomics: dQacc only (the one tensor any schedule adds to), JSON only
      if (dir == Dir::atomic && t != Tensor::dQacc) continue;
      const std::string_view verb = dir == Dir::read ? "read from" : dir == Dir::write ? "written to" : "added to";
      add(fmt::format("{}_{}", to_string(dir), to_string(t)), fmt::format("hbm.{}_bytes.{}", to_string(dir), to_string(t)),
          fmt::format("HBM {} {}", dir == Dir::read ? "read of" : dir == Dir::write ? "written to" : "atomics on",
                      to_string(t)),
          Unit::bytes, tensor_help(t, std::string(verb).c_str()),
          [t, dir](const Figures& f) { return Value::of(hbm(f, t, dir)); }, dir != Dir::atomic);
    }
}

// Tiles (i, j) of S by class and by what the schedule did with them.
void tile_metrics(const Add& add) {
  add("tiles_total", "tiles.total", "tiles", Unit::items, "T_r x T_c tiles (i, j) of S, all (batch, head) pairs.",
      integer([](const Figures& f) { return f.counters.tiles.total; }));
  add("tiles_visited", "tiles.visited", "tiles computed", Unit::items,
      "Tiles the schedule computes; with block skip off (V1's default) skipped tiles are computed too, and "
      "standard attention computes all of S.",
      integer([](const Figures& f) { return f.counters.tiles.visited; }));
  add("tiles_full", "tiles.full", "full tiles", Unit::items, "Tiles whose every element is visible under the mask.",
      integer([](const Figures& f) { return f.counters.tiles.full; }));
  add("tiles_partial", "tiles.partial", "partial tiles", Unit::items,
      "Tiles with some visible elements: computed whole, masked inside.",
      integer([](const Figures& f) { return f.counters.tiles.partial; }));
  add("tiles_skipped", "tiles.skipped", "skipped tiles", Unit::items,
      "Tiles with no visible element: not visited when block skip is on.",
      integer([](const Figures& f) { return f.counters.tiles.skipped; }));
}

// Arithmetic.
void arithmetic_metrics(const Add& add) {
  add("flops_matmul", "flops.matmul", "matmul FLOPs", Unit::flops,
      "4 rows(i) cols(j) d per computed tile: S = Q_i K_j^T and P~ V_j, masked elements of a partial tile included.",
      integer(flops));
  for (int n = 0; n < kOpKindCount; ++n) {
    const OpKind k = OpKind(n);
    add(fmt::format("ops_{}", to_string(k)), fmt::format("ops.{}", to_string(k)), std::string(to_string(k)), Unit::ops,
        op_help(k), [k](const Figures& f) { return Value::of(ops(f, k)); });
  }
}

// On chip and on the GPU preset.
void grid_metrics(const Add& add) {
  add("sram_peak_bytes", "sram.peak_bytes", "SRAM peak per block", Unit::bytes,
      "Largest on-chip working set of one thread block: Q_i, K_j, V_j and S_ij (docs/model.md \"SRAM\").",
      integer([](const Figures& f) { return u(f.counters.sram_peak_bytes); }));
  add("sram_capacity_bytes", "sram.capacity_bytes", "SRAM capacity M", Unit::bytes,
      "SRAM capacity M of one thread block (default: the GPU preset's shared memory per block).",
      integer([](const Figures& f) { return u(f.counters.sram_capacity); }), false);  // a config column
  add("grid_blocks", "grid.blocks", "grid blocks", Unit::items,
      "Thread blocks launched: V1 one per (batch, head), V2 one per Q block and (batch, head), V3 as V2 with "
      "--scheduler grid and one per SM with persistent (its default).",
      integer([](const Figures& f) { return u(f.counters.grid_blocks); }));
  add("blocks_per_sm", "grid.blocks_per_sm", "blocks per SM", Unit::items,
      "Thread blocks resident at once on one SM of the GPU preset (SRAM, warps and the block limit).",
      integer([](const Figures& f) { return u(f.counters.blocks_per_sm); }));
  add("waves", "grid.waves", "waves on {gpu}", Unit::items,
      "ceil(grid blocks / (SMs x blocks per SM)): the rounds of thread blocks the GPU runs.",
      integer([](const Figures& f) { return u(f.counters.waves); }));
  add("sms", "grid.sms", "SMs of {gpu}", Unit::items, "Streaming multiprocessors of the GPU preset.",
      integer([](const Figures& f) { return u(f.problem.gpu.sms); }), false);
  add("steps", "steps", "steps", Unit::items, "Steps of the schedule, one (batch, head).",
      integer([](const Figures& f) { return f.counters.steps; }));
}

// The other memory levels (memory.hpp; docs/model.md "Memory levels"), shaped like HBM's.
void level_metrics(const Add& add) {
  for (Memory lv : {Memory::sector, Memory::sram, Memory::registers, Memory::l2, Memory::dram}) {
    const std::string name(to_string(lv));
    const std::string shown = lv == Memory::l2 ? "L2" : lv == Memory::dram ? "DRAM" : name;  // in labels
    const std::string where = lv == Memory::sector ? "in whole 32-byte sectors, as the kernels move them"
                              : lv == Memory::sram ? "in shared memory: tile loads land there, stores leave from there"
                              : lv == Memory::l2   ? "at the L2 (the L2 model's requests, in sectors)"
                              : lv == Memory::dram ? "at DRAM (the L2 model's misses and write-backs)"
                                                   : "in registers: the tiles the schedule keeps there";
    add(name + "_read_bytes", "memory." + name + ".total_read_bytes", shown + " read", Unit::bytes,
        "Bytes read " + where + " (the level's own side: a store reads it), all (batch, head) pairs.",
        [lv](const Figures& f) { return level_total(f, lv, Dir::read); });
    add(name + "_write_bytes", "memory." + name + ".total_write_bytes", shown + " written", Unit::bytes,
        "Bytes written " + where + " (a load writes it), all (batch, head) pairs.",
        [lv](const Figures& f) { return level_total(f, lv, Dir::write); });
    add(name + "_total_bytes", "memory." + name + ".total_bytes", shown + " read + written", Unit::bytes,
        "Bytes read plus written " + where + ".", [lv](const Figures& f) {
          const Value r = level_total(f, lv, Dir::read), w = level_total(f, lv, Dir::write);
          return r.none() ? Value{} : Value::of(r.integer + w.integer);
        });
    for (Dir dir : {Dir::read, Dir::write})
      for (int n = 0; n < kTensorCount; ++n) {
        const Tensor t = Tensor(n);
        const bool rd = dir == Dir::read;
        add(fmt::format("{}_{}_{}", name, rd ? "read" : "write", to_string(t)),
            fmt::format("memory.{}.{}_bytes.{}", name, rd ? "read" : "write", to_string(t)),
            fmt::format("{} {} {}", shown, to_string(t), rd ? "read" : "written"), Unit::bytes,
            fmt::format("Bytes of {} {} {}.", to_string(t), rd ? "read" : "written", where),
            [lv, t, dir](const Figures& f) { return level_bytes(f, lv, t, dir); }, false);  // JSON only
      }
  }
}

// Derived from the above.
void derived_metrics(const Add& add) {
  add("hbm_s_p_bytes", "derived.hbm_s_p_bytes", "S and P traffic", Unit::bytes,
      "Bytes of S and P read and written: standard attention's N_q x N_k matrices (FA1 Alg. 0); 0 for V1, V2, V3.",
      integer([](const Figures& f) {
        return hbm(f, Tensor::S, Dir::read) + hbm(f, Tensor::S, Dir::write) + hbm(f, Tensor::P, Dir::read) +
               hbm(f, Tensor::P, Dir::write);
      }));
  add("hbm_o_l_m_read_bytes", "derived.hbm_o_l_m_read_bytes", "O, l, m re-reads", Unit::bytes,
      "Bytes of O, l and m read back: V1 reads them for every tile (FA1 Alg. 1 line 8); 0 for V2, V3 and standard.",
      integer([](const Figures& f) {
        return hbm(f, Tensor::O, Dir::read) + hbm(f, Tensor::l, Dir::read) + hbm(f, Tensor::m, Dir::read);
      }));
  add("ops_all", "derived.ops_all", "non-matmul ops, all kinds", Unit::ops,
      "exp, max, add, sub, mul, div and log together.", integer(all_ops));
  add("flops_per_hbm_byte", "derived.flops_per_hbm_byte", "FLOPs per HBM byte", Unit::ratio,
      "matmul FLOPs / HBM bytes read + written (arithmetic intensity); none when no byte moves.",
      [](const Figures& f) {
        return hbm_total(f) == 0 ? Value{} : Value::of_real(double(flops(f)) / double(hbm_total(f)));
      });
  add("hbm_seconds", "derived.hbm_seconds", "HBM time at {hbm_bandwidth}", Unit::seconds,
      "HBM bytes / the GPU preset's datasheet bandwidth: a lower bound on the time (docs/model.md \"Presets\").",
      [](const Figures& f) {
        return Value::of_real(double(hbm_total(f)) / f.problem.gpu.dram_read_bytes_per_s.datasheet.value);
      });
  add("matmul_seconds", "derived.matmul_seconds", "matmul time at peak rate", Unit::seconds,
      "matmul FLOPs / the preset's fp16 tensor rate (fp32 rate for fp32 inputs): a lower bound on the time.",
      [](const Figures& f) {
        const GpuSpec& g = f.problem.gpu;
        const Rate& peak = f.problem.dtype == Dtype::fp32 ? g.fp32_flops : g.mma_f16_flops;
        return Value::of_real(double(flops(f)) / peak.datasheet.value);
      });
}

// The L2 model and the time model (docs/model.md "L2 and DRAM", "Time model").
void predicted_metrics(const Add& add) {
  // none where a thread block does not fit on an SM: no wave can run, there is no time to predict
  const auto predicted = [](auto get) {
    return [get](const Figures& f) { return f.time_model && fits_on_sm(f.counters) ? get(f.time) : Value{}; };
  };
  add("predicted_seconds", "predicted.time_s", "predicted time (time model)", Unit::seconds,
      "The time model's prediction over every launch, launch overhead included (docs/model.md \"Time model\").",
      predicted([](const TimePrediction& t) { return Value::of_real(t.time_s); }));
  add("predicted_tflops", "predicted.tflops", "predicted TFLOP/s", Unit::ratio,
      "matmul FLOPs / the predicted time, in 10^12 per second.",
      predicted([](const TimePrediction& t) { return Value::of_real(t.tflops); }));
}

// The warp model (docs/warps.md): what the split of each tile between warps costs.
void warp_metrics(const Add& add) {
  add("warp_smem_write_bytes", "warps.smem_write_bytes", "shared memory written by warp reductions", Unit::bytes,
      "fp32 partials the warps write to shared memory for cross-warp reductions (split-K: row max, row sum, "
      "P~ V_j; docs/warps.md); 0 under split-Q, none for standard attention.",
      [](const Figures& f) { return warp_sum(f, [](const WarpWork& w) { return w.smem_write; }); });
  add("warp_smem_read_bytes", "warps.smem_read_bytes", "shared memory read by warp reductions", Unit::bytes,
      "fp32 partials the warps read back from shared memory to combine them (split-K; docs/warps.md); 0 under "
      "split-Q.",
      [](const Figures& f) { return warp_sum(f, [](const WarpWork& w) { return w.smem_read; }); });
  add("warp_smem_bytes", "warps.smem_bytes", "shared memory of warp reductions", Unit::bytes,
      "Shared-memory bytes written plus read by the cross-warp reductions of the warp split (docs/warps.md).",
      [](const Figures& f) { return warp_sum(f, [](const WarpWork& w) { return w.smem_write + w.smem_read; }); });
  add("warp_barriers", "warps.barriers", "barriers", Unit::items,
      "Barriers the thread blocks wait at, summed over thread blocks: 2 per computed tile under split-Q, 5 under "
      "split-K (docs/warps.md); every warp waits at each.",
      [](const Figures& f) { return f.warp_model && !f.warps.empty() ? Value::of(f.warps[0].barriers) : Value{}; });
  for (int n = 0; n < kOpKindCount; ++n) {
    const OpKind k = OpKind(n);
    add(fmt::format("warp_extra_{}", to_string(k)), fmt::format("warps.extra_ops.{}", to_string(k)),
        fmt::format("extra {} of the warp split", to_string(k)), Unit::ops,
        fmt::format("{} operations the warps do beyond the thread block's own count: split-K's cross-warp "
                    "combines (docs/warps.md); 0 under split-Q.",
                    to_string(k)),
        [k](const Figures& f) { return f.warp_model ? Value::of(extra(f, k)) : Value{}; });
  }
  add("warp_extra_ops", "warps.extra_ops_total", "extra ops of the warp split", Unit::ops,
      "Non-matmul operations of every kind the warps do beyond the thread block's own count (split-K's "
      "cross-warp combines of the row max, row sum and P~ V_j; docs/warps.md); 0 under split-Q.",
      [](const Figures& f) {
        if (!f.warp_model) return Value{};
        std::uint64_t s = 0;
        for (int n = 0; n < kOpKindCount; ++n) s += extra(f, OpKind(n));
        return Value::of(s);
      });
}

// The whole catalogue, section by section, in the order it is listed (docs/output.md).
std::vector<Metric> build() {
  std::vector<Metric> m;
  const Add add{m};
  hbm_metrics(add);
  tile_metrics(add);
  arithmetic_metrics(add);
  grid_metrics(add);
  level_metrics(add);
  derived_metrics(add);
  predicted_metrics(add);
  warp_metrics(add);
  return m;
}

// Whether the walk has a tile loop that the warp model splits between warps.
bool has_tile_loop(const Executor& e) { return has_tiles(e.schedule()) && !has_warp_roles(e.schedule()); }

}  // namespace

std::string_view to_string(Unit u) {
  switch (u) {
    case Unit::bytes: return "bytes";
    case Unit::flops: return "FLOP";
    case Unit::ops: return "operations";
    case Unit::items: return "count";
    case Unit::seconds: return "seconds";
    case Unit::ratio: return "ratio";
  }
  return "?";
}

Figures figures_of(const Executor& finished, const WarpCounter& warps) {
  Figures f{finished.problem(), finished.counters(), has_tile_loop(finished), {}, false, {}};
  if (f.warp_model) f.warps = warps.totals();
  return f;
}

Figures measure(const Problem& p, StepObserver* also) { return measure(p, make_schedule(p), also); }

Figures measure(const Problem& p, const Schedule& s, StepObserver* also) {
  WarpCounter warps(p);
  // Both observers ride on the one walk of model(): the warp counter, then `also`.
  struct Both : StepObserver {
    StepObserver* a;
    StepObserver* b;
    void on_step(const StepView& s) override {
      a->on_step(s);
      if (b) b->on_step(s);
    }
  } both;
  both.a = &warps;
  both.b = also;
  Modelled m = model(p, s, &both);
  // the warp model splits a thread block's warps by V1's or V2's rule: not V3's warp roles
  Figures f{p, std::move(m.counters), has_tiles(s) && !has_warp_roles(s), {}, m.timed, std::move(m.time)};
  if (f.warp_model) f.warps = warps.totals();
  return f;
}

double Value::as_double() const {
  switch (kind) {
    case Kind::integer: return double(integer);
    case Kind::real: return real;
    case Kind::none: break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

const std::vector<Metric>& catalogue() {
  static const std::vector<Metric> all = build();
  return all;
}

const Metric& metric(std::string_view key) {
  for (const Metric& m : catalogue())
    if (m.key == key) return m;
  std::string keys;
  for (const Metric& m : catalogue()) keys += (keys.empty() ? "" : ", ") + m.key;
  throw ConfigError("metric", std::string(key), "one of " + keys);
}

Value value_of(std::string_view key, const Figures& f) { return metric(key).value(f); }

std::string label_of(const Metric& m, const Problem& p) {
  std::string s = m.label;
  const auto fill = [&s](std::string_view name, const std::string& text) {
    if (const auto at = s.find(name); at != std::string::npos) s.replace(at, name.size(), text);
  };
  fill("{gpu}", p.gpu.name);
  fill("{hbm_bandwidth}", fmt::format("{:.2f} TB/s", p.gpu.dram_read_bytes_per_s.datasheet.value / 1e12));
  return s;
}

std::string human(const Metric& m, const Value& v) {
  if (v.none()) return "-";
  const double x = v.as_double();
  switch (m.unit) {
    case Unit::bytes: return human_bytes(x);
    case Unit::flops:
    case Unit::ops: return human_count(x);
    case Unit::items: return v.kind == Value::Kind::integer ? group_digits(v.integer) : fmt::format("{:.0f}", x);
    case Unit::seconds: return seconds(x);
    case Unit::ratio: return fmt::format("{:.1f}", x);
  }
  return "?";
}

std::string precise(const Metric& m, const Value& v) {
  if (v.kind != Value::Kind::integer) return human(m, v);
  return m.unit == Unit::bytes ? bytes_both(v.integer) : group_digits(v.integer);
}

std::string exact(const Value& v) {
  switch (v.kind) {
    case Value::Kind::integer: return std::to_string(v.integer);
    case Value::Kind::real: return fmt::format("{}", v.real);
    case Value::Kind::none: break;
  }
  return "";
}

nlohmann::json json_value(const Value& v) {
  switch (v.kind) {
    case Value::Kind::integer: return v.integer;
    case Value::Kind::real: return std::isfinite(v.real) ? nlohmann::json(v.real) : nlohmann::json();
    case Value::Kind::none: break;
  }
  return nullptr;
}

nlohmann::json metrics_json(const Figures& f) {
  nlohmann::json out = nlohmann::json::object();
  for (const Metric& m : catalogue()) {
    std::string pointer = "/" + m.json_path;
    for (char& c : pointer)
      if (c == '.') c = '/';
    out[nlohmann::json::json_pointer(pointer)] = json_value(m.value(f));
  }
  return out;
}

}  // namespace flashlab::report
