// main.cu — the front door of V3's staged forward kernel (issue 27 item 4): unit tests of its pieces,
// then one configuration at a time: random normal inputs, the kernel, the float64 CPU check, and
// (with --time) its kernel time. Each result is one JSON line on stdout.
//
//   v3 unit
//   v3 list
//   v3 run VARIANT fp16|bf16 D none|causal B N H [--time] [--seed S] [--full] [--br 128|192]
//   v3 clock, v3 trace ...: trace_cmd.cuh (the instrumented kernel: events and %globaltimer stamps)
//
// "fa3" at d = 64 runs the B_r that v3::fa3_rows picks for N and the mask (variants.cuh); --br forces
// one (the tile sweep that measures the rule). Other variants have one B_r; --br must then match it.
// Layout [B, N, H, D] (v3_forward.cuh). The check compares every row (--full, or B*N*H <= 65,536) or
// 512 sampled rows (the first and last rows included) with float64; O is poisoned (all bits set: NaN)
// before the launch and a guard of 4 KiB after it must stay untouched; a second launch (O poisoned
// again) and the last timed one must give the same bits. --time: the median over 15
// repetitions of (CUDA event, 5 back-to-back launches of the kernel and nothing else, CUDA event) / 5,
// after 3 warm-up launches; TFLOP/s = 4 B H N^2 D (halved when causal) / time.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "run_setup.cuh"
#include "trace_cmd.cuh"
#include "unit_tests.cuh"

namespace {

using namespace v3cli;

int cmd_unit() {
  std::vector<v3unit::UnitResult> r;
  r.push_back(v3unit::test_ss<64, 128>("tma_wgmma_ss_d64_n128_valid128", 128, 11));
  r.push_back(v3unit::test_ss<64, 128>("tma_wgmma_ss_d64_n128_valid100", 100, 12));
  r.push_back(v3unit::test_ss<128, 176>("tma_wgmma_ss_d128_n176_valid170", 170, 13));
  r.push_back(v3unit::test_rs<64, 128>("tma_wgmma_rs_trans_d64_k128", 128, 14));
  r.push_back(v3unit::test_rs<128, 176>("tma_wgmma_rs_trans_d128_k176_valid150", 150, 15));
  int fails = 0;
  for (const auto& x : r) {
    std::printf("{\"unit\": \"%s\", \"max_abs\": %.3g, \"rel_l2\": %.3g, \"pass\": %s}\n", x.name, x.max_abs, x.rel_l2,
                x.pass ? "true" : "false");
    fails += !x.pass;
  }
  return fails ? 1 : 0;
}

int cmd_list() {
  for (const auto& e : all_entries())
    std::printf("%s %s d%d %s threads %d smem %d Br %d Bc %d stages %d ws %d pp %d ov %d sched %d\n", e.name.c_str(),
                e.bf16 ? "bf16" : "fp16", e.d, e.causal ? "causal" : "none", e.threads, e.smem, e.br, e.bc, e.stages,
                e.warp_spec, e.pingpong, e.intra_overlap, e.sched);
  return 0;
}

int cmd_run(int argc, char** argv) {
  bool time = false;
  const Shape s = parse_shape(argc, argv, "run", [&](int, char** a, int& i) {
    if (std::strcmp(a[i], "--time")) return false;
    time = true;
    return true;
  });
  const Entry e = find_entry(s);
  const Setup u(s, e);
  e.prepare();
  e.launch(u.p, u.grid, 0);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const Checked c = check_launch(s, u);
  // the launch again (O poisoned again), and after the timed launches: O must be the same bits (the
  // dynamic scheduler's counter is left at zero by each launch; the kernel is deterministic)
  u.poison_o();
  e.launch(u.p, u.grid, 0);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  bool repeat_identical = same_bits(u, c);
  const bool pass = c.numbers_ok() && repeat_identical;

  double ms = -1;
  if (time && pass) {
    // between the two events: 5 back-to-back launches of this kernel and nothing else
    cudaEvent_t a, z;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&z));
    for (int w = 0; w < 3; ++w) e.launch(u.p, u.grid, 0);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<double> t;
    for (int r = 0; r < 15; ++r) {
      CHECK(cudaEventRecord(a));
      for (int w = 0; w < 5; ++w) e.launch(u.p, u.grid, 0);
      CHECK(cudaEventRecord(z));
      CHECK(cudaEventSynchronize(z));
      CHECK(cudaGetLastError());
      float x = 0;
      CHECK(cudaEventElapsedTime(&x, a, z));
      t.push_back(x / 5.0);
    }
    std::sort(t.begin(), t.end());
    ms = t[t.size() / 2];
    repeat_identical = same_bits(u, c);
    if (!repeat_identical) ms = -1;  // not the function that was checked
  }
  const double flops = 4.0 * s.B * s.H * double(s.N) * s.N * s.d * (s.causal ? 0.5 : 1.0);
  std::printf("{%s, \"check\": %s, \"time_ms\": %s, \"tflops\": %s}\n", variant_json(s, e, u.grid).c_str(),
              check_json(c, repeat_identical, pass).c_str(), ms > 0 ? std::to_string(ms).c_str() : "null",
              ms > 0 ? std::to_string(flops / (ms * 1e-3) / 1e12).c_str() : "null");
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("no command");
  const std::string c = argv[1];
  if (c == "unit") return cmd_unit();
  if (c == "list") return cmd_list();
  if (c == "run") return cmd_run(argc, argv);
  if (c == "trace") return cmd_trace(argc, argv);
  if (c == "clock") return cmd_clock();
  usage(("unknown command " + c).c_str());
}
