// trace_cmd.cuh — `v3 clock` and `v3 trace` (issue 27 item 4: V3 validated like V2, events and
// per-warpgroup %globaltimer stamps). One JSON line each on stdout.
//
//   v3 clock
//     %globaltimer (PTX ISA "Special registers", ns) read back to back by one thread for 2^20 reads:
//     how often it changes (updates), its steps between changes (min / median / max ns, the first
//     65,536), whether it never goes back, the ns and %clock64 cycles one read takes (read_ns,
//     globaltimer_read_cycles), the cycles of one %clock64 read, and the SM's cycles per ns over the
//     loop. pass: monotonic and at least 2 updates. Exit 0 pass, 1 not.
//   v3 trace VARIANT fp16|bf16 D none|causal B N H --events FILE --stamps FILE
//           [--events-format text|binary] [--stamp-ctas all|C,C,...] [--commit SHA] [--seed S] [--full]
//           [--br 128|192]
//     the instrumented kernel (record.cuh) twice on the same inputs: the first launch is checked as
//     `v3 run` checks (O and L against float64, guard, poisoned O), the second (counters reset, O
//     poisoned) must give the same O bits and is the one recorded. Writes
//       --events FILE: the trace of (batch, head) 0 in the simulator's format (trace_file.hpp: the
//         simulator's writer, config resolved by the simulator for this variant; text by default);
//       --stamps FILE: CSV, one row per stamp: sm,cta,agent,step,i,j,what,t_begin_ns,t_end_ns (agent 1
//         the producer, 2 + k consumer warpgroup k, as Event::agent; what: record.cuh What's names;
//         %clock64 stamps mapped to %globaltimer ns by each agent's two (globaltimer, clock64) pairs,
//         record.cuh; times relative to the earliest stamp written), every CTA or those of --stamp-ctas.
//     The JSON line: the variant, the check, events (written), events_dropped, stamps, stamps_dropped
//     (past the buffers' capacity: the counts say), t_r, t_c, sim_flags (the `flashlab trace` flags of
//     the same config), kernel_span_ns (last stamp end - first stamp begin, all CTAs),
//     sm_cycles_per_ns (median over the agents of (c1 - c0) / (g1 - g0)), clock_pairs_bad (agents
//     with stamps whose pairs do not increase: their stamps are written at g0).
//     Exit 0 pass, 3 the check failed (or records were dropped), 2 bad input (also: this build has no
//     trace: the plain nvcc build of ncu_run.sh; the CMake target flashlab_v3_staged has it).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "record.cuh"
#include "run_setup.cuh"
#ifdef V3_TRACE
#include "trace_file.hpp"
#endif

namespace v3cli {

// out[0]: globaltimer span of the reads (ns), out[1]: their clock64 cycles, out[2]: clock64 cycles of
// as many clock64 reads, out[3]: a value that keeps the second loop
__global__ void clock_kernel(std::uint64_t* steps, unsigned* n_steps, unsigned cap, unsigned reads, int* back,
                             std::uint64_t* out) {
  const std::uint64_t c0 = v3::clock64_now();
  const std::uint64_t first = v3::globaltimer();
  std::uint64_t prev = first;
  unsigned n = 0;
  for (unsigned r = 0; r < reads; ++r) {
    const std::uint64_t t = v3::globaltimer();
    if (t < prev) *back = 1;
    if (t != prev) {
      if (n < cap) steps[n] = t - prev;
      ++n;
      prev = t;
    }
  }
  const std::uint64_t c1 = v3::clock64_now();
  std::uint64_t x = 0;
  for (unsigned r = 0; r < reads; ++r) x ^= v3::clock64_now();
  const std::uint64_t c2 = v3::clock64_now();
  *n_steps = n;
  out[0] = prev - first;
  out[1] = c1 - c0;
  out[2] = c2 - c1;
  out[3] = x;
}

inline int cmd_clock() {
  const unsigned cap = 1u << 16, reads = 1u << 20;
  std::uint64_t *steps, *out;
  unsigned* n;
  int* back;
  CHECK(cudaMalloc(&steps, cap * 8));
  CHECK(cudaMalloc(&out, 4 * 8));
  CHECK(cudaMalloc(&n, 4));
  CHECK(cudaMalloc(&back, 4));
  CHECK(cudaMemset(back, 0, 4));
  clock_kernel<<<1, 1>>>(steps, n, cap, reads, back, out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  unsigned hn = 0;
  int hb = 0;
  std::uint64_t ho[4];
  CHECK(cudaMemcpy(&hn, n, 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&hb, back, 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(ho, out, 4 * 8, cudaMemcpyDeviceToHost));
  std::vector<std::uint64_t> h(std::min(hn, cap));
  CHECK(cudaMemcpy(h.data(), steps, h.size() * 8, cudaMemcpyDeviceToHost));
  std::sort(h.begin(), h.end());
  const bool pass = !hb && hn >= 2;
  std::printf("{\"clock\": \"globaltimer\", \"reads\": %u, \"updates\": %u, \"min_step_ns\": %llu, \"median_step_ns\": %llu, "
              "\"max_step_ns\": %llu, \"span_ns\": %llu, \"read_ns\": %.2f, \"globaltimer_read_cycles\": %.2f, "
              "\"clock64_read_cycles\": %.2f, \"sm_cycles_per_ns\": %.4f, \"monotonic\": %s, \"pass\": %s}\n",
              reads, hn, h.empty() ? 0ull : (unsigned long long)h.front(),
              h.empty() ? 0ull : (unsigned long long)h[h.size() / 2], h.empty() ? 0ull : (unsigned long long)h.back(),
              (unsigned long long)ho[0], double(ho[0]) / reads, double(ho[1]) / reads, double(ho[2]) / reads,
              ho[0] ? double(ho[1]) / double(ho[0]) : 0.0, hb ? "false" : "true", pass ? "true" : "false");
  CHECK(cudaFree(steps));
  CHECK(cudaFree(out));
  CHECK(cudaFree(n));
  CHECK(cudaFree(back));
  return pass ? 0 : 1;
}

inline const char* what_name(v3::What w) {
  using v3::What;
  switch (w) {
    case What::wait_q_empty: return "wait_q_empty";
    case What::load_q: return "load_q";
    case What::wait_k_empty: return "wait_k_empty";
    case What::load_k: return "load_k";
    case What::wait_v_empty: return "wait_v_empty";
    case What::load_v: return "load_v";
    case What::sched: return "sched";
    case What::wait_q_full: return "wait_q_full";
    case What::wait_k_full: return "wait_k_full";
    case What::wait_v_full: return "wait_v_full";
    case What::pp_wait: return "pp_wait";
    case What::issue_s: return "issue_s";
    case What::issue_pv: return "issue_pv";
    case What::wait_s: return "wait_s";
    case What::softmax: return "softmax";
    case What::wait_pv: return "wait_pv";
    case What::rescale: return "rescale";
    case What::epilogue: return "epilogue";
    case What::sched_wait: return "sched_wait";
  }
  return "?";
}

#ifndef V3_TRACE
inline int cmd_trace(int, char**) {
  usage("v3 trace: not in this build (the plain nvcc build); build the CMake target flashlab_v3_staged");
}
#else
template <class T>
struct DevArray {
  T* p = nullptr;
  std::size_t n = 0;
  explicit DevArray(std::size_t n_) : n(n_) {
    CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
    CHECK(cudaMemset(p, 0, std::max<std::size_t>(n, 1) * sizeof(T)));
  }
  ~DevArray() { CHECK(cudaFree(p)); }
  std::vector<T> get() const {
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  void zero() const { CHECK(cudaMemset(p, 0, std::max<std::size_t>(n, 1) * sizeof(T))); }
};

inline std::vector<int> parse_ctas(const std::string& s) {
  std::vector<int> r;
  if (s == "all") return r;
  std::size_t a = 0;
  while (a <= s.size()) {
    const std::size_t b = std::min(s.find(',', a), s.size());
    const std::string w = s.substr(a, b - a);
    char* end = nullptr;
    const long x = std::strtol(w.c_str(), &end, 10);
    if (w.empty() || *end || x < 0) usage(("--stamp-ctas = " + s + ": all or CTA numbers separated by commas").c_str());
    r.push_back(int(x));
    a = b + 1;
  }
  return r;
}

inline int cmd_trace(int argc, char** argv) {
  std::string events_path, stamps_path, format = "text", ctas = "all", commit;
  const Shape s = parse_shape(argc, argv, "trace", [&](int n, char** a, int& i) {
    auto val = [&](std::string& out) {
      if (i + 1 >= n) usage((std::string(a[i]) + " needs a value").c_str());
      out = a[++i];
      return true;
    };
    if (!std::strcmp(a[i], "--events")) return val(events_path);
    if (!std::strcmp(a[i], "--stamps")) return val(stamps_path);
    if (!std::strcmp(a[i], "--events-format")) return val(format);
    if (!std::strcmp(a[i], "--stamp-ctas")) return val(ctas);
    if (!std::strcmp(a[i], "--commit")) return val(commit);
    return false;
  });
  if (events_path.empty() || stamps_path.empty()) usage("trace needs --events FILE and --stamps FILE");
  if (format != "text" && format != "binary") usage(("--events-format = " + format + ": text or binary").c_str());
  const std::vector<int> cta_list = parse_ctas(ctas);
  const Entry e = find_entry(s);

  v3trace::Spec spec;
  spec.bf16 = s.bf16, spec.causal = s.causal, spec.d = s.d, spec.batch = s.B, spec.n = s.N, spec.heads = s.H;
  spec.br = e.br, spec.bc = e.bc, spec.stages = e.stages, spec.warp_spec = e.warp_spec, spec.pingpong = e.pingpong;
  spec.intra_overlap = e.intra_overlap, spec.persistent = e.sched != 0;
  for (int i = 0; i < argc; ++i) spec.command += (i ? " " : "") + std::string(argv[i]);
  spec.commit = commit;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int drv = 0;
  CHECK(cudaDriverGetVersion(&drv));
  spec.device = prop.name;
  spec.driver = "CUDA driver API " + std::to_string(drv);
  int t_r = 0, t_c = 0;
  try {
    v3trace::tile_counts(spec, t_r, t_c);
  } catch (const std::exception& x) {
    usage(x.what());
  }

  const Setup u(s, e);
  // buffers: one slot per (CTA, agent); events of the traced head's tiles (at most T_r per CTA),
  // stamps of every tile the CTA runs (static / grid: at most ceil(tiles / grid); the dynamic
  // scheduler's deal depends on timing: room for twice that, overflow counted)
  const int agents = 1 + e.br / 64, slots = u.grid * agents;
  const int per_cta = (u.p.num_tiles + u.grid - 1) / u.grid;
  const int tiles_cap = e.sched == 2 ? std::min(u.p.num_tiles, 2 * per_cta + 2) : per_cta;
  const unsigned ev_cap = unsigned(std::min(t_r, tiles_cap) * (t_c + 2) * 24 + 64);
  const unsigned st_cap = unsigned(tiles_cap * (t_c + 2) * 12 + 16);
  DevArray<flashlab::Event> events(std::size_t(slots) * ev_cap);
  DevArray<v3::Stamp> stamps(std::size_t(slots) * st_cap);
  DevArray<unsigned> ev_count(slots), st_count(slots), smids(u.grid);
  DevArray<std::uint64_t> sync(std::size_t(slots) * 4);
  v3::RecBuffers rb;
  rb.events = events.p, rb.ev_count = ev_count.p, rb.ev_cap = ev_cap;
  rb.stamps = stamps.p, rb.st_count = st_count.p, rb.st_cap = st_cap;
  rb.smid = smids.p, rb.sync = sync.p, rb.agents = agents, rb.traced_bh = 0, rb.t_c = t_c;

  e.prepare_traced();
  e.launch_traced(u.p, rb, u.grid, 0);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const Checked c = check_launch(s, u);
  u.poison_o();
  ev_count.zero();
  st_count.zero();
  sync.zero();
  e.launch_traced(u.p, rb, u.grid, 0);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const bool repeat_identical = same_bits(u, c);

  // events: each slot's in program order, then merged into the simulator's stream order
  const auto evc = ev_count.get();
  const auto evs = events.get();
  std::vector<flashlab::Event> all;
  unsigned long long ev_dropped = 0;
  for (int sl = 0; sl < slots; ++sl) {
    const unsigned n = std::min(evc[sl], ev_cap);
    ev_dropped += evc[sl] - n;
    all.insert(all.end(), evs.begin() + std::ptrdiff_t(std::size_t(sl) * ev_cap),
               evs.begin() + std::ptrdiff_t(std::size_t(sl) * ev_cap + n));
  }
  const std::size_t n_events = all.size();
  try {
    v3trace::write(events_path, spec, std::move(all), format == "text");
  } catch (const std::exception& x) {
    std::fprintf(stderr, "error: %s\n", x.what());
    return 4;
  }

  // stamps: each agent's clock64 cycles to globaltimer ns by its two (globaltimer, clock64) pairs
  const auto stc = st_count.get();
  const auto sts = stamps.get();
  const auto sm = smids.get();
  const auto sy = sync.get();
  std::vector<double> rate;
  int pairs_bad = 0;
  auto to_ns = [&](int sl, std::uint64_t c) {
    const std::uint64_t g0 = sy[4 * sl], c0 = sy[4 * sl + 1], g1 = sy[4 * sl + 2], c1 = sy[4 * sl + 3];
    if (c1 <= c0 || g1 < g0) return double(g0);
    return double(g0) + (double(c) - double(c0)) * double(g1 - g0) / double(c1 - c0);
  };
  for (int sl = 0; sl < slots; ++sl) {
    if (!stc[sl]) continue;
    const std::uint64_t g0 = sy[4 * sl], c0 = sy[4 * sl + 1], g1 = sy[4 * sl + 2], c1 = sy[4 * sl + 3];
    if (c1 <= c0 || g1 <= g0) ++pairs_bad;
    else rate.push_back(double(c1 - c0) / double(g1 - g0));
  }
  std::sort(rate.begin(), rate.end());
  unsigned long long st_dropped = 0, n_stamps = 0;
  double t_min = 1e300, t_max = -1e300, w_min = 1e300;
  auto chosen = [&](int cta) {
    return cta_list.empty() || std::find(cta_list.begin(), cta_list.end(), cta) != cta_list.end();
  };
  for (int sl = 0; sl < slots; ++sl) {
    const unsigned n = std::min(stc[sl], st_cap);
    st_dropped += stc[sl] - n;
    for (unsigned k = 0; k < n; ++k) {
      const v3::Stamp& x = sts[std::size_t(sl) * st_cap + k];
      t_min = std::min(t_min, to_ns(sl, x.t0));
      t_max = std::max(t_max, to_ns(sl, x.t1));
      if (chosen(sl / agents)) w_min = std::min(w_min, to_ns(sl, x.t0));
    }
  }
  std::FILE* f = std::fopen(stamps_path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "error: --stamps %s: cannot be written\n", stamps_path.c_str());
    return 4;
  }
  std::fprintf(f, "sm,cta,agent,step,i,j,what,t_begin_ns,t_end_ns\n");
  for (int sl = 0; sl < slots; ++sl) {
    if (!chosen(sl / agents)) continue;
    const unsigned n = std::min(stc[sl], st_cap);
    for (unsigned k = 0; k < n; ++k) {
      const v3::Stamp& x = sts[std::size_t(sl) * st_cap + k];
      std::fprintf(f, "%u,%d,%u,%u,%d,%d,%s,%.1f,%.1f\n", sm[sl / agents], sl / agents, unsigned(x.agent), x.step, x.i,
                   x.j, what_name(x.what), to_ns(sl, x.t0) - w_min, to_ns(sl, x.t1) - w_min);
      ++n_stamps;
    }
  }
  if (std::fclose(f) != 0) {
    std::fprintf(stderr, "error: --stamps %s: write failed\n", stamps_path.c_str());
    return 4;
  }

  const bool pass = c.numbers_ok() && repeat_identical && ev_dropped == 0 && st_dropped == 0;
  std::printf("{%s, \"check\": %s, \"events\": %zu, \"events_dropped\": %llu, \"stamps\": %llu, \"stamps_dropped\": %llu, "
              "\"t_r\": %d, \"t_c\": %d, \"sim_flags\": \"%s\", \"kernel_span_ns\": %.0f, \"sm_cycles_per_ns\": %.4f, "
              "\"clock_pairs_bad\": %d, \"events_file\": \"%s\", \"stamps_file\": \"%s\"}\n",
              variant_json(s, e, u.grid).c_str(), check_json(c, repeat_identical, pass).c_str(), n_events, ev_dropped,
              n_stamps, st_dropped, t_r, t_c, v3trace::sim_flags(spec).c_str(),
              t_max >= t_min ? t_max - t_min : 0.0, rate.empty() ? 0.0 : rate[rate.size() / 2], pairs_bad,
              events_path.c_str(), stamps_path.c_str());
  return pass ? 0 : 3;
}
#endif

}  // namespace v3cli
