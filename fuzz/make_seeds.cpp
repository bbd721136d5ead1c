// Writes the fuzzer's seed corpus: small valid traces of both forms (block and warp level, V1 and
// V2, split-Q and split-K, with m/l statistics, a GPU header). Usage: fuzz_make_seeds DIR
#include <cstdio>
#include <string>

#include "flashlab/trace/trace_io.hpp"

using namespace flashlab;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  struct Seed {
    const char* name;
    Algo algo;
    TraceLevel level;
    WarpSplit split;
    Mask mask;
    bool stats, gpu;
  };
  const Seed seeds[] = {
      {"v2_block", Algo::v2, TraceLevel::block, WarpSplit::split_q, Mask{MaskKind::causal_tl, 0, 0}, false, false},
      {"v2_warp_stats", Algo::v2, TraceLevel::warp, WarpSplit::split_q, Mask{MaskKind::causal_br, 0, 0}, true, false},
      {"v1_warp_splitk", Algo::v1, TraceLevel::warp, WarpSplit::split_k, Mask{}, true, false},
      {"standard_gpu", Algo::standard, TraceLevel::block, WarpSplit::split_q, Mask{MaskKind::window, 2, 1}, false, true},
  };
  for (const Seed& s : seeds) {
    Config c;
    c.algo = s.algo;
    c.n_q = 7;
    c.n_k = 5;
    c.d = 2;
    c.b_r = 4;
    c.b_c = 2;
    c.warps = 2;
    c.split = s.split;
    c.mask = s.mask;
    const Problem p = resolve(c);
    Trace t = record_trace(p, s.level);
    if (s.stats) add_stats(t, p, {0, 1}, InputSpec{"random", "index", "0.5", 3});
    if (s.gpu) {
      t.header.source = TraceSource::gpu;
      t.header.gpu = GpuRunInfo{"NVIDIA H200", "580.65.06", "0123abc"};
      t.header.command = "kernels/scripts/gpu_trace.sh";
    }
    write_trace(dir + "/" + s.name + ".txt", t, TraceFormat::text);
    write_trace(dir + "/" + s.name + ".bin", t, TraceFormat::binary);
  }
  return 0;
}
