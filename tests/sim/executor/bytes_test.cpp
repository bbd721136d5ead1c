// A trace's bytes add up to the counters: loads and stores per tensor to `flashlab count`'s HBM
// counters, reduce events to the warp model's shared-memory bytes.
#include <doctest/doctest.h>

#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace.hpp"
#include "flashlab/warps/warps.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;

TEST_CASE("summed load and store bytes of a trace equal count()'s HBM counters, per tensor") {
  const Mask masks[] = {Mask{}, Mask{MaskKind::causal_tl, 0, 0}, Mask{MaskKind::causal_br, 0, 0},
                        Mask{MaskKind::window, 9, 3}};
  for (Algo a : {Algo::standard, Algo::v1, Algo::v2})
    for (const Mask& m : masks)
      for (TraceLevel level : {TraceLevel::block, TraceLevel::warp}) {
        Config c = test::small(a, 45, 70, 16, 16, 12, m);
        c.batch = 2;
        c.heads = 3;  // count() multiplies by batch * heads; a trace is one (batch, head)
        const Problem p = resolve(c);
        const Trace t = record_trace(p, level);
        std::uint64_t sum[kTensorCount][2] = {};
        for (const Event& e : t.events) {
          if (e.op == Op::load) sum[int(e.tensor)][0] += e.bytes;
          if (e.op == Op::store) sum[int(e.tensor)][1] += e.bytes;
        }
        const Counters k = count(p);
        CAPTURE(int(a));
        CAPTURE(to_string(m));
        for (int tensor = 0; tensor < kTensorCount; ++tensor) {
          CAPTURE(to_string(Tensor(tensor)));
          CHECK(sum[tensor][0] * 6 == k.cost.bytes(Tensor(tensor), Dir::read));
          CHECK(sum[tensor][1] * 6 == k.cost.bytes(Tensor(tensor), Dir::write));
        }
      }
}

TEST_CASE("summed reduce bytes of a warp trace equal the warp counters' shared-memory bytes") {
  for (Algo a : {Algo::v1, Algo::v2}) {
    Config c = test::small(a, 45, 70, 16, 16, 12, Mask{MaskKind::causal_br, 0, 0});
    c.warps = 3;
    c.split = WarpSplit::split_k;
    const Problem p = resolve(c);
    Executor ex(p);
    WarpCounter wc(p);
    TraceRecorder rec(p, TraceLevel::warp);
    ex.add_observer(&wc);
    ex.add_observer(&rec);
    ex.run();
    std::uint64_t reduce_bytes = 0, barriers = 0, smem = 0, waits = 0;
    for (const Event& e : rec.events()) {
      if (e.op == Op::reduce) reduce_bytes += e.bytes;
      if (e.op == Op::barrier) ++barriers;
    }
    for (const WarpWork& w : wc.per_head()) {
      smem += w.smem_write + w.smem_read;
      waits += w.barriers;
    }
    CHECK(reduce_bytes > 0);
    CHECK(reduce_bytes == smem);
    CHECK(barriers == waits);
  }
}
