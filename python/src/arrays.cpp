// arrays.cpp — what the simulator walks, as NumPy arrays: trace() (the 40-byte event records of
// sim/include/flashlab/contract/event.hpp as a structured array, one record per event, no Python
// object per event) and tile_map() (per-tile class, whether it is computed, visit order).
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>

#include "bindings.hpp"
#include "interrupt.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/contract/event.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/trace/trace.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "model/palette.hpp"

namespace flashlab::python {
namespace {

// The largest trace() returns unless told otherwise: 2 GiB, the command's --max-bytes default.
constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t(1) << 31;

// The record's fields in memory order, little-endian as the record is on every host flashlab
// runs on (event.hpp: the kernels' device buffer is the same bytes).
py::dtype event_dtype() {
  struct Field {
    const char* name;
    const char* format;
    std::size_t offset;
  };
  static constexpr Field kFields[] = {
      {"block", "<u4", offsetof(Event, block)}, {"step", "<u4", offsetof(Event, step)},
      {"bytes", "<u8", offsetof(Event, bytes)}, {"i", "<i4", offsetof(Event, i)},
      {"j", "<i4", offsetof(Event, j)},         {"rows", "<u4", offsetof(Event, rows)},
      {"cols", "<u4", offsetof(Event, cols)},   {"op", "u1", offsetof(Event, op)},
      {"tensor", "u1", offsetof(Event, tensor)}, {"warp", "<i2", offsetof(Event, warp)},
      {"eq", "u1", offsetof(Event, eq)},        {"agent", "u1", offsetof(Event, agent)},
      {"launch", "<u2", offsetof(Event, launch)},
  };
  py::list names, formats, offsets;
  for (const Field& f : kFields) {
    names.append(f.name);
    formats.append(f.format);
    offsets.append(f.offset);
  }
  return py::dtype(names, formats, offsets, sizeof(Event));
}

// An array of `shape` (C order) viewing `values`, which the array then owns (freed with its last view).
template <typename T>
py::array owning_array(std::vector<T>&& values, const py::dtype& dtype, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule free_owned(owned, [](void* v) { delete static_cast<std::vector<T>*>(v); });
  std::vector<py::ssize_t> strides(shape.size(), py::ssize_t(sizeof(T)));
  for (std::size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  return py::array(dtype, shape, strides, owned->data(), free_owned);
}

py::array trace(const py::object& cfg, const std::string& level_text, std::int64_t max_bytes, const py::object& schedule,
                const py::kwargs& kwargs) {
  const PyConfig c = config_arg(cfg, kwargs);
  const Problem& p = c.problem;
  const Schedule s = schedule_arg(schedule).value_or(make_schedule(p));
  const TraceLevel level = parse_trace_level(level_text);  // ConfigError("level", ...)
  check_trace_level(level, s, p.algo);                     // as `flashlab trace`: no warp level for V3
  if (max_bytes < 1) throw ConfigError("max_bytes", std::to_string(max_bytes), "an integer >= 1 (bytes)");
  TraceHeader h;
  h.config = resolved_config(p);
  h.level = level;
  const TraceSizeBound bound = trace_size_bound(p, s, h, TraceFormat::binary);
  if (bound.events > std::uint64_t(max_bytes) / sizeof(Event))
    throw ConfigError("trace size", fmt::format("{} events of {} bytes (an upper bound)", bound.events, sizeof(Event)),
                      fmt::format("at most max_bytes = {} bytes; raise max_bytes, or trace a smaller config", max_bytes));
  std::vector<Event> events = without_gil([&] {  // Ctrl-C stops the walk (interrupt.hpp)
    Executor ex(p, s);
    TraceRecorder recorder(p, level);
    SignalPoll poll("trace");
    poll.start(p);
    ex.add_observer(&recorder);
    ex.add_observer(&poll);
    ex.run();
    return std::move(recorder.events());
  });
  const auto n = py::ssize_t(events.size());
  return owning_array(std::move(events), event_dtype(), {n});
}

py::dict tile_map(const py::object& cfg, const py::kwargs& kwargs) {
  const PyConfig c = config_arg(cfg, kwargs);
  const Problem& p = c.problem;
  const Tiling& t = p.tiling;
  const std::int64_t t_r = t.t_r(), t_c = t.t_c(), n = t_r * t_c;
  std::vector<std::uint8_t> cls(std::size_t(n), 0), computed(std::size_t(n), 1);
  std::vector<std::int32_t> visit(std::size_t(n), -1);
  std::vector<std::uint64_t> hbm(std::size_t(n), 0), flops(std::size_t(n), 0), exps(std::size_t(n), 0);
  without_gil([&] {
    Executor ex(p, ExecOptions{.tile_stats = true});
    SignalPoll poll("tile_map");
    poll.start(p);
    ex.add_observer(&poll);
    ex.run();
    const std::vector<TileStat>& stats = ex.tile_stats();  // empty without a tile loop: all of S computed
    for (std::int64_t k = 0; k < n; ++k) {
      cls[std::size_t(k)] = std::uint8_t(tile_class(t, p.band, k / t_c, k % t_c));
      if (!stats.empty()) {
        visit[std::size_t(k)] = stats[std::size_t(k)].visit;
        computed[std::size_t(k)] = stats[std::size_t(k)].visit >= 0;
        const Cost cost = ex.tile_cost(k / t_c, k % t_c);  // the tile's steps, one (batch, head)
        hbm[std::size_t(k)] = cost.read_bytes() + cost.write_bytes() + cost.atomic_bytes();
        flops[std::size_t(k)] = cost.flops;
        exps[std::size_t(k)] = cost.op(OpKind::exp);
      }
    }
  });
  py::dict out;
  out["cls"] = owning_array(std::move(cls), py::dtype::of<std::uint8_t>(), {t_r, t_c});
  out["computed"] = owning_array(std::move(computed), py::dtype::of<bool>(), {t_r, t_c});
  out["visit"] = owning_array(std::move(visit), py::dtype::of<std::int32_t>(), {t_r, t_c});
  out["hbm_bytes"] = owning_array(std::move(hbm), py::dtype::of<std::uint64_t>(), {t_r, t_c});
  out["flops"] = owning_array(std::move(flops), py::dtype::of<std::uint64_t>(), {t_r, t_c});
  out["exp"] = owning_array(std::move(exps), py::dtype::of<std::uint64_t>(), {t_r, t_c});
  return out;
}

// The names of an enum's values 0..count-1, by the library's to_string.
template <typename E>
py::tuple names(int count) {
  py::list out;
  for (int k = 0; k < count; ++k) out.append(std::string(to_string(E(k))));
  return py::tuple(out);
}

// A viewer colour (viz/model/palette.hpp) as an (r, g, b) tuple of 0..255.
py::tuple rgb(std::uint32_t colour) {
  return py::make_tuple(viz::channel(colour, 0), viz::channel(colour, 1), viz::channel(colour, 2));
}

}  // namespace

void bind_arrays(py::module_& m) {
  m.attr("EVENT_DTYPE") = event_dtype();
  m.attr("OPS") = names<Op>(kOpCount);
  m.attr("TENSORS") = names<Tensor>(kTensorCount + 1);  // Q..P, then "-" for none
  m.attr("EQS") = names<Eq>(kEqCount);
  m.attr("TILE_CLASSES") = names<TileClass>(3);
  py::dict colours;  // the block-skip map's colours, as the viewer and `count --map` draw it
  colours["full"] = rgb(viz::palette::full);
  colours["partial"] = rgb(viz::palette::partial);
  colours["skipped"] = rgb(viz::palette::skipped);
  colours["computed_skipped"] = rgb(viz::palette::computed_skipped);
  m.attr("TILE_COLOURS") = colours;
  m.def("trace", &trace, py::arg("cfg") = py::none(), py::kw_only(), py::arg("level") = "block",
        py::arg("max_bytes") = std::int64_t(kDefaultMaxBytes), py::arg("schedule") = py::none(), R"doc(
trace(cfg=None, *, level='block', max_bytes=2**31, schedule=None, **kwargs) -> numpy.ndarray

The event trace of one (batch, head), the records `flashlab trace` writes (docs/events.md), as a
1-D structured array of dtype EVENT_DTYPE: the 40-byte record of
sim/include/flashlab/contract/event.hpp, field for field at its offsets — block (thread block),
step, bytes (HBM bytes of a load or store, shared-memory bytes of a reduce, else 0), i and j (tile;
-1: none), rows and cols (elements), op (index into OPS), tensor (into TENSORS), warp (-1: the
whole block), eq (into EQS: the algorithm line a compute event evaluates), agent (0: the whole block;
V3: 1 the producer warp, 2 + k consumer warpgroup k; docs/events.md "V3"), launch.
In stream order: by launch, block, step. The array owns the records (no copy, no per-event object).

level: 'block' (what the CUDA kernels record) or 'warp' (with the warp model's per-warp events).
max_bytes: refuse, before any walk, a trace whose size bound (40 bytes an event) is larger.
schedule: a schedule to walk instead of cfg's own, in the form schedule() returns.
Raises ValueError (flashlab.ConfigError) for a bad config, level or a trace over max_bytes.
)doc");
  m.def("tile_map", &tile_map, py::arg("cfg") = py::none(), R"doc(
tile_map(cfg=None, **kwargs) -> dict of six (T_r, T_c) arrays

The block-skip map of a configuration (docs/model.md "Masks and tile classes"):
  'cls'       uint8: 0 full (every element visible), 1 partial, 2 skipped (none visible) —
              TILE_CLASSES; tiling.hpp tile_class, the mask's band against the tile's rows and columns
  'computed'  bool: the schedule computes the tile (visits it); False only for a skipped tile with
              block skip on; standard attention computes all of S (FA1 Alg. 0 line 1)
  'visit'     int32: the tile's order among visited tiles in the walk, -1 when not visited (and
              everywhere for standard attention, which walks no tiles)
  'hbm_bytes', 'flops', 'exp'   uint64: what the tile's own step costs, one (batch, head): HBM bytes
              read, written and added atomically (the body's: K_j, V_j for V2 — Q_i, O_i, L_i move at
              the Q block's start and end, no one tile's), matmul FLOPs, exponentials (docs/model.md;
              0 for a tile not visited, and for standard attention, whose steps are whole matrices)
Tile (i, j) holds query rows [i B_r, (i+1) B_r) and keys [j B_c, (j+1) B_c), clipped at N_q, N_k.
Raises ValueError (flashlab.ConfigError) for a bad config.
)doc");
}

}  // namespace flashlab::python
