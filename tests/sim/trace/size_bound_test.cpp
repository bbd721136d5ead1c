// trace_size_bound: an upper bound on a trace file's size, exact where the docstring says, checked
// against the traces the executor actually records and their encoded files.
#include <doctest/doctest.h>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;

namespace {

Trace traced(const Config& c, TraceLevel level) { return record_trace(resolve(c), level); }

}  // namespace

TEST_CASE("size bound: exact events and binary bytes when no tile is skipped and every warp works") {
  // N_q, N_k multiples of B_r, B_c; B_r and B_c multiples of W: every warp has rows and columns.
  for (Algo a : {Algo::standard, Algo::v1, Algo::v2})
    for (TraceLevel level : {TraceLevel::block, TraceLevel::warp})
      for (WarpSplit split : {WarpSplit::split_q, WarpSplit::split_k}) {
        Config c = test::small(a, 64, 48, 8, 16, 8);
        c.warps = 4;
        if (a != Algo::standard) c.split = split;  // standard attention takes no warp split
        const Trace t = traced(c, level);
        const TraceSizeBound b = trace_size_bound(resolve(c), t.header, TraceFormat::binary);
        CAPTURE(to_string(a));
        CAPTURE(to_string(level));
        CAPTURE(int(split));
        CHECK(b.events == t.events.size());
        CHECK(b.event_bytes == 40);
        CHECK(b.bytes == encode_trace(t, TraceFormat::binary).size());
      }
}

TEST_CASE("size bound: above the real file, within a factor 3, with masks, ragged tiles, idle warps and statistics") {
  const Mask causal{MaskKind::causal_br, 0, 0}, none{};
  for (Algo a : {Algo::standard, Algo::v1, Algo::v2})
    for (TraceLevel level : {TraceLevel::block, TraceLevel::warp})
      for (const Mask& m : {none, causal})
        for (bool stats : {false, true}) {
          Config c = test::small(a, 37, 29, 8, 8, 6, m);
          c.warps = 3;
          if (a != Algo::standard) c.split = WarpSplit::split_k;  // standard attention takes no warp split
          const Problem p = resolve(c);
          Trace t = record_trace(p, level);
          if (stats) add_stats(t, p, {0, 4}, InputSpec{"random", "index", "0.5", 7});
          for (TraceFormat f : {TraceFormat::binary, TraceFormat::text}) {
            const TraceSizeBound b = trace_size_bound(p, t.header, f, t.stats.size());
            const std::size_t real = encode_trace(t, f).size();
            CAPTURE(to_string(a));
            CAPTURE(to_string(level));
            CAPTURE(to_string(f));
            CAPTURE(stats);
            CHECK(b.events >= t.events.size());
            CHECK(b.bytes >= real);
            CHECK(b.bytes <= 3 * real);
          }
        }
}

TEST_CASE("size bound of 2^30 tiles is computed without walking them") {
  // V2, N = 2^21, B_r = B_c = 64: T_r = T_c = 2^15. Block level, FA2 Alg. 1: 5 events a tile (load
  // K_j, load V_j, S, softmax, output) and 5 a Q block (load Q_i, init, finalize, store O_i, L_i).
  const Config c = test::small(Algo::v2, 1 << 21, 1 << 21, 64, 64, 64);
  const Problem p = resolve(c);
  TraceHeader h;
  h.config = resolved_config(p);
  const TraceSizeBound b = trace_size_bound(p, h, TraceFormat::binary);
  CHECK(b.events == 5ull * (1ull << 30) + 5ull * (1ull << 15));
  CHECK(b.bytes > 40 * b.events);
}
