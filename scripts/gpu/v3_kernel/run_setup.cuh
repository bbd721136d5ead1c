// run_setup.cuh — what `v3 run` and `v3 trace` share (main.cu, trace_cmd.cuh): the command line of one
// configuration (VARIANT DTYPE D MASK B N H and --seed, --full, --br), the compiled variant it
// names, random inputs with O poisoned and guarded, the parameters and grid, and the float64 check
// of O and L (every row when B*N*H <= 65,536 or --full, else 512 sampled rows; tolerance on the
// relative L2 error fp16 4e-3, bf16 2.5e-2; L within 1e-2) — main.cu's header gives the rules.
// Bad input: a message and exit 2.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "host.cuh"
#include "variants.cuh"

namespace v3cli {


using v3::Entry;

inline std::vector<Entry> all_entries() {
  auto v = v3::variants_fa3();
  auto a = v3::variants_ablation();
  v.insert(v.end(), a.begin(), a.end());
  return v;
}

[[noreturn]] inline void usage(const char* why) {
  std::fprintf(stderr,
               "error: %s\nusage: v3 unit | v3 list | v3 clock | v3 run VARIANT fp16|bf16 D none|causal B N H [--time] [--seed S] "
               "[--full] [--br 128|192]\n       v3 trace VARIANT fp16|bf16 D none|causal B N H --events FILE --stamps FILE "
               "[--events-format text|binary] [--stamp-ctas all|C,C,...] [--commit SHA] [--seed S] [--full] [--br 128|192]\n",
               why);
  std::exit(2);
}

// One configuration as the command line gives it: `v3 run|trace VARIANT DTYPE D MASK B N H [options]`;
// options this parser does not know are left to `more` (it returns false for one it refuses too).
struct Shape {
  std::string name, dtype, mask;
  int d = 0, B = 0, N = 0, H = 0, br_forced = 0;
  bool bf16 = false, causal = false, full = false;
  unsigned long long seed = 1;
};
template <class More>
Shape parse_shape(int argc, char** argv, const char* cmd, More more) {
  if (argc < 9) usage((std::string(cmd) + " needs VARIANT DTYPE D MASK B N H").c_str());
  Shape s;
  s.name = argv[2], s.dtype = argv[3], s.mask = argv[5];
  s.d = std::atoi(argv[4]), s.B = std::atoi(argv[6]), s.N = std::atoi(argv[7]), s.H = std::atoi(argv[8]);
  if (s.dtype != "fp16" && s.dtype != "bf16") usage(("DTYPE = " + s.dtype + ": fp16 or bf16").c_str());
  if (s.mask != "none" && s.mask != "causal") usage(("MASK = " + s.mask + ": none or causal").c_str());
  if (s.B < 1 || s.N < 1 || s.H < 1) usage("B, N, H: at least 1");
  for (int i = 9; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--full")) s.full = true;
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) s.seed = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--br") && i + 1 < argc) {
      s.br_forced = std::atoi(argv[++i]);
      if (s.br_forced != 128 && s.br_forced != 192) usage((std::string("--br = ") + argv[i] + ": 128 or 192").c_str());
    } else if (!more(argc, argv, i)) usage((std::string("unknown argument ") + argv[i]).c_str());
  }
  s.bf16 = s.dtype == "bf16", s.causal = s.mask == "causal";
  return s;
}

// The compiled variant of s: "fa3" the B_r of the launch rule unless --br forces one; any other
// variant its only B_r. Exits 2 when there is none.
inline Entry find_entry(const Shape& s) {
  const int want_br = s.br_forced ? s.br_forced : s.name == "fa3" ? v3::fa3_rows(s.d, s.causal, s.N) : 0;
  const Entry* e = nullptr;
  static const auto entries = all_entries();
  for (const auto& x : entries)
    if (x.name == s.name && x.bf16 == s.bf16 && x.d == s.d && x.causal == s.causal && (!want_br || x.br == want_br)) e = &x;
  if (!e)
    usage(("no variant " + s.name + " " + s.dtype + " d" + std::to_string(s.d) + " " + s.mask +
           (want_br ? " B_r " + std::to_string(want_br) : std::string()) + " (see v3 list)").c_str());
  return *e;
}

// Inputs (random normal), O poisoned with a 4 KiB guard after it, L poisoned, the parameters and the grid.
struct Setup {
  std::size_t count = 0, guard = 4096;
  void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  float* lse = nullptr;
  int* counter = nullptr;
  v3::Params p{};
  int grid = 0;
  Setup(const Shape& s, const Entry& e) {
    const int B = s.B, N = s.N, H = s.H, d = s.d;
    count = std::size_t(B) * N * H * d;
    CHECK(cudaMalloc(&q, count * 2));
    CHECK(cudaMalloc(&k, count * 2));
    CHECK(cudaMalloc(&v, count * 2));
    CHECK(cudaMalloc(&o, count * 2 + guard));
    CHECK(cudaMalloc(&lse, std::size_t(B) * H * N * 4));
    v3host::fill_normal(q, count, s.bf16, s.seed * 3);
    v3host::fill_normal(k, count, s.bf16, s.seed * 3 + 1);
    v3host::fill_normal(v, count, s.bf16, s.seed * 3 + 2);
    CHECK(cudaMemset(o, 0xFF, count * 2 + guard));
    CHECK(cudaMemset(lse, 0xFF, std::size_t(B) * H * N * 4));
    p.tm_q = v3host::make_map(q, B, N, H, d, e.br, s.bf16);
    p.tm_k = v3host::make_map(k, B, N, H, d, e.bc, s.bf16);
    p.tm_v = v3host::make_map(v, B, N, H, d, e.bc, s.bf16);
    p.o = o;
    p.lse = lse;
    p.b = B;
    p.h = H;
    p.n = N;
    p.num_m_blocks = (N + e.br - 1) / e.br;
    p.num_tiles = p.num_m_blocks * B * H;
    p.scale = 1.f / std::sqrt(float(d));
    p.scale_log2 = p.scale * 1.4426950408889634f;
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    // the dynamic scheduler's [next tile, blocks finished], zero; the kernel leaves it zero
    CHECK(cudaMalloc(&counter, 2 * sizeof(int)));
    CHECK(cudaMemset(counter, 0, 2 * sizeof(int)));
    p.tile_counter = counter;
    grid = e.sched ? std::min(p.num_tiles, sms) : p.num_tiles;
  }
  ~Setup() {
    CHECK(cudaFree(q));
    CHECK(cudaFree(k));
    CHECK(cudaFree(v));
    CHECK(cudaFree(o));
    CHECK(cudaFree(lse));
    CHECK(cudaFree(counter));
  }
  void poison_o() const { CHECK(cudaMemset(o, 0xFF, count * 2)); }
  std::vector<std::uint16_t> o_bits(bool with_guard) const {
    std::vector<std::uint16_t> r(count + (with_guard ? guard / 2 : 0));
    CHECK(cudaMemcpy(r.data(), o, r.size() * 2, cudaMemcpyDeviceToHost));
    return r;
  }
};

// The float64 check of the launch just run (header): its O bits (guard included) and the verdict parts.
struct Checked {
  std::vector<std::uint16_t> oraw;
  v3host::Errors err;
  bool guard_ok = true;
  double tol = 0;
  bool numbers_ok() const { return guard_ok && err.nonfinite == 0 && err.rel_l2 < tol && err.lse_max_abs < 1e-2; }
};
inline Checked check_launch(const Shape& s, const Setup& u) {
  const int B = s.B, N = s.N, H = s.H, d = s.d;
  Checked c;
  const auto hq = v3host::download(u.q, u.count, s.bf16), hk = v3host::download(u.k, u.count, s.bf16),
             hv = v3host::download(u.v, u.count, s.bf16);
  c.oraw = u.o_bits(true);
  for (std::size_t i = u.count; i < c.oraw.size(); ++i) c.guard_ok &= c.oraw[i] == 0xFFFF;
  std::vector<float> ho(u.count), hl(std::size_t(B) * H * N);
  for (std::size_t i = 0; i < u.count; ++i) ho[i] = v3host::to_float(c.oraw[i], s.bf16);
  CHECK(cudaMemcpy(hl.data(), u.lse, hl.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<v3host::RowId> rows;
  if (s.full || std::size_t(B) * N * H <= 65536) {
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        for (int n = 0; n < N; ++n) rows.push_back({b, h, n});
  } else {
    std::mt19937_64 rng(s.seed);
    rows = {{0, 0, 0}, {B - 1, H - 1, N - 1}, {B - 1, H - 1, N - 2}, {0, H - 1, N - 1}};
    while (rows.size() < 512) rows.push_back({int(rng() % B), int(rng() % H), int(rng() % N)});
  }
  c.err = v3host::check_rows(hq, hk, hv, ho, hl, B, N, H, d, s.causal, u.p.scale, rows);
  c.tol = s.bf16 ? 2.5e-2 : 4e-3;
  return c;
}
// O after another launch: the same bits as the checked one (the kernel is deterministic)
inline bool same_bits(const Setup& u, const Checked& c) {
  const auto again = u.o_bits(false);
  return std::equal(again.begin(), again.end(), c.oraw.begin());
}

inline std::string check_json(const Checked& c, bool repeat_identical, bool pass) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"rows\": %lld, \"max_abs\": %.4g, \"rel_l2\": %.4g, \"lse_max_abs\": %.4g, \"nonfinite\": %lld, "
                "\"guard_ok\": %s, \"repeat_identical\": %s, \"tol_rel_l2\": %g, \"pass\": %s}",
                c.err.rows, c.err.max_abs, c.err.rel_l2, c.err.lse_max_abs, c.err.nonfinite, c.guard_ok ? "true" : "false",
                repeat_identical ? "true" : "false", c.tol, pass ? "true" : "false");
  return buf;
}

inline std::string variant_json(const Shape& s, const Entry& e, int grid) {
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "\"variant\": \"%s\", \"dtype\": \"%s\", \"d\": %d, \"mask\": \"%s\", \"batch\": %d, \"n\": %d, "
                "\"heads\": %d, \"b_r\": %d, \"b_c\": %d, \"stages\": %d, \"warp_specialize\": %s, \"pingpong\": %s, "
                "\"intra_overlap\": %s, \"scheduler\": \"%s\", \"threads\": %d, \"smem\": %d, \"grid\": %d, \"seed\": %llu",
                s.name.c_str(), s.dtype.c_str(), s.d, s.mask.c_str(), s.B, s.N, s.H, e.br, e.bc, e.stages,
                e.warp_spec ? "true" : "false", e.pingpong ? "true" : "false", e.intra_overlap ? "true" : "false",
                e.sched == 2 ? "dynamic" : e.sched == 1 ? "static" : "grid", e.threads, e.smem, grid, s.seed);
  return buf;
}

}  // namespace v3cli
