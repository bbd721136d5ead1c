// Both file forms read back losslessly, on disk too, and the streaming writer writes the same bytes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <unistd.h>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;

namespace {

Trace sample(TraceLevel level, bool stats) {
  Config c = test::small(Algo::v2, 37, 29, 8, 8, 6, Mask{MaskKind::causal_br, 0, 0});
  c.warps = 3;
  const Problem p = resolve(c);
  Trace t = record_trace(p, level);
  t.header.command = "flashlab trace --nq 37 \"quoted\" \\ tab\t";
  t.header.model = stats ? "llama3-8b" : "";  // the config's model preset, when there was one
  if (stats) add_stats(t, p, {4, 0, 2}, InputSpec{"random", "index", "0.5", 7});
  return t;
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          ("flashlab_trace_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace

TEST_CASE("text and binary forms round-trip every field, statistics included") {
  for (TraceLevel level : {TraceLevel::block, TraceLevel::warp})
    for (bool stats : {false, true}) {
      const Trace t = sample(level, stats);
      if (stats) {
        REQUIRE(t.stats.size() == 3);
        CHECK(t.stats[0].i == 0);  // sorted by i
        REQUIRE(!t.stats[0].snapshots.empty());
        // before any visible key (bottom-right causal, N_q > N_k: Q block 0 sees nothing) m = -inf
        CHECK(std::isinf(t.stats[0].snapshots.back().m[0]));
      }
      for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
        const std::string bytes = encode_trace(t, f);
        const Trace back = decode_trace(bytes);
        CHECK(test::same_trace(t, back));
        CHECK(encode_trace(back, f) == bytes);
      }
      // text -> binary gives the bytes the binary writer gives
      CHECK(encode_trace(decode_trace(encode_trace(t, TraceFormat::text)), TraceFormat::binary) ==
            encode_trace(t, TraceFormat::binary));
    }
}

TEST_CASE("special values and extreme fields survive both forms") {
  Trace t = sample(TraceLevel::block, true);
  StatSnapshot& s = t.stats[1].snapshots.front();
  s.m[0] = -std::numeric_limits<float>::infinity();
  s.l[0] = std::numeric_limits<float>::denorm_min();
  s.m[1] = 3.4028235e38f;
  s.l[1] = -0.0f;
  Event e;
  // the last thread block and step the readers accept: nq 37 on B_r 8 is T_r = 5 Q blocks (V2: one
  // thread block each), nk 29 on B_c 6 T_c = 5; a (batch, head) has 2 T_r + T_r T_c = 35 steps at most
  e.block = 4;
  e.step = 34;
  e.bytes = 0xffffffffffffffffull;
  // tile indices at the ends the readers accept (docs/events.md "Validity": -1 or inside T_r x T_c)
  e.i = -1;
  e.j = std::int32_t(trace_problem(t.header).tiling.t_c() - 1);
  e.rows = 0xffffffffu;
  e.op = Op::reduce;
  e.tensor = Tensor::P;
  e.warp = -1;
  e.eq = Eq::output_dense;
  t.events.push_back(e);
  for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) CHECK(test::same_trace(t, decode_trace(encode_trace(t, f))));
}

TEST_CASE("an event outside the config's launches, thread blocks or steps is refused, naming the field") {
  // the sample: V2 (one launch), nq 37 / B_r 8 = T_r 5 thread blocks, nk 29 / B_c 6 = T_c 5, so at
  // most 2 T_r + T_r T_c = 35 steps in a (batch, head) (docs/events.md "Validity")
  const Trace good = sample(TraceLevel::block, false);
  const auto refused = [&](void (*edit)(Event&), const std::string& needle) {
    Trace t = good;
    edit(t.events.back());
    for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) test::rejects(encode_trace(t, f), needle);
  };
  const std::string last = "trace event " + std::to_string(good.events.size() - 1);
  refused([](Event& e) { e.block = 5; }, last + " block = 5: a thread block of launch 0 (v2_forward) within a (batch, head), 0 to 4");
  refused([](Event& e) { e.block = 0xffffffffu; }, last + " block = 4294967295");
  refused([](Event& e) { e.step = 35; }, last + " step = 35: 0 to 34");
  refused([](Event& e) { e.launch = 1; }, last + " launch = 1: a launch of algo v2's schedule, 0 to 0");
  // standard attention: three launches of one thread block per Q block (S, O) or per query row (softmax)
  const Config c = test::small(Algo::standard, 37, 29, 8, 8, 6, Mask{MaskKind::none, 0, 0});
  Trace st = record_trace(resolve(c), TraceLevel::block);
  st.events.back().launch = 3;
  test::rejects(encode_trace(st, TraceFormat::binary), "launch = 3: a launch of algo standard's schedule, 0 to 2");
}

TEST_CASE("GPU headers keep device, driver, commit and command") {
  Trace t = sample(TraceLevel::block, false);
  t.header.source = TraceSource::gpu;
  t.header.gpu = GpuRunInfo{"NVIDIA H200", "580.65.06", "0123abc"};
  t.header.command = "scripts/gpu_trace.sh --algo v2";
  for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
    const Trace back = decode_trace(encode_trace(t, f));
    CHECK(test::same_trace(t, back));
    CHECK(back.header.gpu.device == "NVIDIA H200");
  }
}

TEST_CASE("files: write_trace/read_trace and the streaming writer give the same bytes") {
  const Trace t = sample(TraceLevel::warp, true);
  const Problem p = trace_problem(t.header);
  for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
    const std::string a = temp_path("a"), b = temp_path("b");
    write_trace(a, t, f);
    CHECK(test::same_trace(read_trace(a), t));
    {
      TraceFileWriter w(b, p, t.header, f);
      Executor ex(p);
      ex.add_observer(&w);
      ex.run();
      CHECK(w.events_written() == t.events.size());
      w.finish(t.stats);
    }
    CHECK(test::same_trace(read_trace(b), t));
    CHECK(!std::filesystem::exists(b + ".tmp-" + std::to_string(::getpid())));
    std::filesystem::remove(a);
    std::filesystem::remove(b);
  }
}

TEST_CASE("a writer that does not finish leaves no file behind") {
  const Trace t = sample(TraceLevel::block, false);
  const std::string path = temp_path("unfinished");
  std::filesystem::remove(path);
  {
    TraceFileWriter w(path, trace_problem(t.header), t.header, TraceFormat::binary);
    w.add_events(t.events);
  }
  CHECK(!std::filesystem::exists(path));
  CHECK(!std::filesystem::exists(path + ".tmp-" + std::to_string(::getpid())));
  CHECK_THROWS_AS(write_trace("/nonexistent-dir/x.trace", t, TraceFormat::text), ConfigError);
  CHECK_THROWS_AS(read_trace("/nonexistent-dir/x.trace"), ConfigError);
}
