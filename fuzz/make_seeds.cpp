// Writes the fuzzer's seed corpus in the format this build writes: small valid traces of both
// forms (block and warp level, standard, V1 and V2, split-Q and split-K, with m/l statistics, a
// GPU header), a valid trace whose header is just under the 1 MiB cap (a long command), and
// headers nested up to and past the depth cap. fuzz/corpus keeps version-1 seeds that this build
// can no longer write. Usage: fuzz_make_seeds DIR
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "../tests/common/config_helpers.hpp"
#include "../tests/common/trace_file.hpp"

using namespace flashlab;

namespace {

std::string header_of(const std::string& text_file) {
  const std::size_t h0 = text_file.find("\nheader ") + 8;
  return text_file.substr(h0, text_file.find('\n', h0) - h0);
}

void put(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

}  // namespace

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
    std::optional<WarpSplit> split;  // none for standard attention, which takes no warp split
    Mask mask;
    bool stats, gpu;
    Pass pass = Pass::forward;
  };
  const Seed seeds[] = {
      {"v2_block", Algo::v2, TraceLevel::block, WarpSplit::split_q, Mask{MaskKind::causal_tl, 0, 0}, false, false},
      {"v2_warp_stats", Algo::v2, TraceLevel::warp, WarpSplit::split_q, Mask{MaskKind::causal_br, 0, 0}, true, false},
      {"v1_warp_splitk", Algo::v1, TraceLevel::warp, WarpSplit::split_k, Mask{}, true, false},
      {"standard_gpu", Algo::standard, TraceLevel::block, std::nullopt, Mask{MaskKind::window, 2, 1}, false, true},
      // the backward (format version 3): its tensors, atomics and equations
      {"v2_backward_warp", Algo::v2, TraceLevel::warp, WarpSplit::split_q, Mask{MaskKind::causal_tl, 0, 0}, false, false,
       Pass::backward},
      {"v1_backward_block", Algo::v1, TraceLevel::block, WarpSplit::split_k, Mask{}, false, false, Pass::both},
  };
  for (const Seed& s : seeds) {
    Config c = test::small(s.algo, 7, 5, 2, 4, 2, s.mask);
    c.warps = 2;
    c.split = s.split;
    c.pass = s.pass;
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

  // A header near the cap: a command that fills it to 64 bytes under kMaxTraceHeaderBytes.
  Trace t = record_trace(resolve(test::small(Algo::v2, 7, 5, 2, 4, 2)), TraceLevel::block);
  t.header.command = "x";
  const std::size_t base = header_of(encode_trace(t, TraceFormat::text)).size();
  t.header.command = std::string(kMaxTraceHeaderBytes - 64 - base, 'x');
  write_trace(dir + "/header_near_cap.txt", t, TraceFormat::text);
  write_trace(dir + "/header_near_cap.bin", t, TraceFormat::binary);

  // Nesting at the depth cap (config.n_q an array at levels 3 to 8) and far past it.
  t.header.command.clear();
  const std::string key = "\"n_q\":", field = key + "7";
  for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
    const std::string file = encode_trace(t, f), json = header_of(encode_trace(t, TraceFormat::text));
    const std::string ext = f == TraceFormat::text ? ".txt" : ".bin";
    const std::size_t nq = json.find(field);
    if (nq == std::string::npos) {  // the writer's schema changed: the seed would not nest where it should
      std::fprintf(stderr, "fuzz_make_seeds: %s not found in the header the writer makes\n", field.c_str());
      return 1;
    }
    for (int depth : {6, 7}) {
      std::string deep = json;
      deep.replace(nq, field.size(), key + std::string(std::size_t(depth), '[') + "7" + std::string(std::size_t(depth), ']'));
      put(dir + "/header_nq_nested_" + std::to_string(depth) + ext, test::with_header_json(file, deep));
    }
    put(dir + "/header_nested_60000" + ext, test::with_header_json(file, std::string(60000, '[') + std::string(60000, ']')));
  }
  return 0;
}
