// l2_writeback.cu — what makes O leave the L2 during an attention-shaped launch (issue 27's DRAM
// written). At the same bytes held the project's V2 kernel writes 1-3% of O back to DRAM during the
// launch, PyTorch's FA2 15-37% and the staged V3 kernel 8-24% (H100, d 128 N 4096 B 2 at 3-4 heads:
// tests/data/gpu_timing/h100_footprint_2.json, tests/data/gpu_v3/v3_l2_footprint_h100.json). The three
// differ in the order each thread block walks its K/V blocks (V2 from the first, FA2 and V3 from the
// last) and in O's layout (V2 (B, H, N, d); V3 (B, N, H, d), a row of one head every H d elements).
// This kernel moves the bytes of V2's forward pass and nothing else: thread block (i, bh) of a
// (T_r, B H) grid reads Q_i (B_r rows), then K_j and V_j (B_c rows each) for every j in the walk's
// order, then stores O_i; 16-byte loads through the L2 only (ld.global.cg), 16-byte stores. A case
// picks the layout (bhsd / bshd), the walk (fwd / bwd) and the thread blocks per SM (dynamic shared
// memory sized so that 1 or 2 fit), so each factor is changed alone.
//
// Usage: l2_writeback CASE...   CASE = layout,walk,per_sm,batch,heads,n,d,br,bc (e.g. bhsd,fwd,2,2,4,4096,128,128,64)
// Launches each case once (kernel name l2wb_attn), then prints one JSON line per case; run under
// Nsight Compute (scripts/gpu/l2_writeback.py) for its DRAM bytes. Bad cases: message, exit 2.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "sm_clock.cuh"

namespace {

constexpr int kThreads = 128;

struct Case {
  bool bshd = false, backward = false;
  int per_sm = 1, batch = 1, heads = 1, n = 0, d = 0, br = 0, bc = 0;
  long long spin = 0;  // cycles after each K/V block
  double spread = 0;   // thread block k spins spin x (1 - spread / 2 + spread f_k)
  int prefetch = 0;    // the loads' L2 prefetch size: 0, 128 or 256 bytes
};

struct Params {
  const uint4 *q, *k, *v;
  uint4* o;
  int batch, heads, n, d, br, bc;
  bool bshd, backward;
  long long spin;
  float spread;
  int prefetch;
  unsigned long long* stamps;  // 2 per thread block: start, end (%globaltimer, ns)
};

// Element offset of row `row` of head (b, h) in the chosen layout.
__device__ std::size_t row_offset(const Params& p, int bh, int row) {
  const int b = bh / p.heads, h = bh % p.heads;
  return p.bshd ? ((std::size_t(b) * p.n + row) * p.heads + h) * p.d : (std::size_t(bh) * p.n + row) * p.d;
}

// One 16-byte load through the L2 only, with the case's L2 prefetch size.
__device__ uint4 load16(const uint4* a, int prefetch) {
  uint4 x;
  if (prefetch == 128)
    asm volatile("ld.global.cg.L2::128B.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w) : "l"(a));
  else if (prefetch == 256)
    asm volatile("ld.global.cg.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w) : "l"(a));
  else
    x = __ldcg(a);
  return x;
}

// XOR of rows [row0, row0 + rows) of one head, d halves each, 8 halves per 16-byte load.
__device__ std::uint32_t read_rows(const Params& p, const uint4* t, int bh, int row0, int rows) {
  const int per_row = p.d / 8;
  std::uint32_t acc = 0;
  for (int e = threadIdx.x; e < rows * per_row; e += kThreads) {
    const int r = row0 + e / per_row;
    if (r >= p.n) break;
    const uint4 x = load16(t + row_offset(p, bh, r) / 8 + e % per_row, p.prefetch);
    acc ^= x.x ^ x.y ^ x.z ^ x.w;
  }
  return acc;
}

__global__ void __launch_bounds__(kThreads) l2wb_attn(Params p) {
  const int i = blockIdx.x, bh = blockIdx.y;
  const unsigned k = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) p.stamps[2 * k] = global_ns();
  const float f = float((k * 2654435761u) >> 16) / 65535.f;  // Knuth's multiplicative hash, in [0, 1]
  const long long spin = (long long)(float(p.spin) * (1.f - p.spread / 2 + p.spread * f));
  const int t_c = (p.n + p.bc - 1) / p.bc;
  std::uint32_t acc = read_rows(p, p.q, bh, i * p.br, p.br);
  for (int s = 0; s < t_c; ++s) {
    const int j = p.backward ? t_c - 1 - s : s;
    acc ^= read_rows(p, p.k, bh, j * p.bc, p.bc);
    acc ^= read_rows(p, p.v, bh, j * p.bc, p.bc);
    for (const long long t0 = clock64(); clock64() - t0 < spin;) {
    }
  }
  const int per_row = p.d / 8;
  for (int e = threadIdx.x; e < p.br * per_row; e += kThreads) {
    const int r = i * p.br + e / per_row;
    if (r >= p.n) break;
    p.o[row_offset(p, bh, r) / 8 + e % per_row] = make_uint4(acc, acc + 1, acc + 2, acc + e);
  }
  __syncthreads();
  if (threadIdx.x == 0) p.stamps[2 * k + 1] = global_ns();
}

bool parse(const char* text, Case& c, std::string& why) {
  char layout[8] = {}, walk[8] = {};
  const int got = std::sscanf(text, "%7[^,],%7[^,],%d,%d,%d,%d,%d,%d,%d,%lld,%lf,%d", layout, walk, &c.per_sm, &c.batch,
                              &c.heads, &c.n, &c.d, &c.br, &c.bc, &c.spin, &c.spread, &c.prefetch);
  if (got != 9 && got != 11 && got != 12) {
    why = "expected layout,walk,per_sm,batch,heads,n,d,br,bc[,spin,spread[,prefetch]]";
    return false;
  }
  c.bshd = std::strcmp(layout, "bshd") == 0;
  c.backward = std::strcmp(walk, "bwd") == 0;
  if (!c.bshd && std::strcmp(layout, "bhsd") != 0) why = "layout must be bhsd or bshd";
  else if (!c.backward && std::strcmp(walk, "fwd") != 0) why = "walk must be fwd or bwd";
  else if (c.per_sm != 1 && c.per_sm != 2) why = "per_sm must be 1 or 2";
  else if (c.batch < 1 || c.heads < 1 || c.n < 1 || c.br < 1 || c.bc < 1) why = "batch, heads, n, br, bc must be >= 1";
  else if (c.d < 8 || c.d % 8 != 0) why = "d must be a positive multiple of 8";
  else if (c.spin < 0 || c.spin > 1000000) why = "spin must be 0 to 1000000 cycles";
  else if (!(c.spread >= 0 && c.spread < 2)) why = "spread must be in [0, 2)";
  else if (c.prefetch != 0 && c.prefetch != 128 && c.prefetch != 256) why = "prefetch must be 0, 128 or 256";
  return why.empty();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: l2_writeback CASE...  (CASE = layout,walk,per_sm,batch,heads,n,d,br,bc[,spin,spread[,prefetch]])\n");
    return 2;
  }
  std::vector<Case> cases;
  for (int a = 1; a < argc; ++a) {
    Case c;
    std::string why;
    if (!parse(argv[a], c, why)) {
      std::fprintf(stderr, "l2_writeback: case %d '%s': %s\n", a, argv[a], why.c_str());
      return 2;
    }
    cases.push_back(c);
  }
  int sms = 0, smem_max = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  CHECK(cudaFuncSetAttribute(l2wb_attn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
  for (const Case& c : cases) {
    const std::size_t elems = std::size_t(c.batch) * c.heads * c.n * c.d, bytes = elems * 2;
    void* buf = nullptr;
    CHECK(cudaMalloc(&buf, 4 * bytes));
    CHECK(cudaMemset(buf, 1, 4 * bytes));
    auto* base = static_cast<uint4*>(buf);
    const std::size_t quarter = bytes / 16;
    const dim3 grid(unsigned((c.n + c.br - 1) / c.br), unsigned(c.batch * c.heads));
    const std::size_t blocks = std::size_t(grid.x) * grid.y;
    unsigned long long* stamps = nullptr;
    CHECK(cudaMalloc(&stamps, 2 * blocks * sizeof(unsigned long long)));
    const Params p{base, base + quarter, base + 2 * quarter, base + 3 * quarter, c.batch, c.heads, c.n, c.d, c.br, c.bc,
                   c.bshd, c.backward, c.spin, float(c.spread), c.prefetch, stamps};
    // 1 per SM: more than half the SM's shared memory; 2: just under half
    const int smem = c.per_sm == 1 ? smem_max / 2 + 1024 : smem_max / 2 - 1024;
    int fit = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, l2wb_attn, kThreads, smem));
    l2wb_attn<<<grid, kThreads, smem>>>(p);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned long long> t(2 * blocks);
    CHECK(cudaMemcpy(t.data(), stamps, t.size() * sizeof(t[0]), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(stamps));
    CHECK(cudaFree(buf));
    unsigned long long first = t[0];
    std::vector<double> ends(blocks);
    for (std::size_t b = 0; b < blocks; ++b) first = std::min(first, t[2 * b]);
    for (std::size_t b = 0; b < blocks; ++b) ends[b] = double(t[2 * b + 1] - first) * 1e-3;
    std::sort(ends.begin(), ends.end());
    std::printf("{\"layout\": \"%s\", \"walk\": \"%s\", \"per_sm\": %d, \"blocks_per_sm\": %d, \"sms\": %d, \"batch\": %d, "
                "\"heads\": %d, \"n\": %d, \"d\": %d, \"br\": %d, \"bc\": %d, \"spin\": %lld, \"spread\": %.2f, \"prefetch\": %d, "
                "\"blocks\": %zu, \"o_bytes\": %zu, \"end_first_us\": %.2f, \"end_median_us\": %.2f, \"end_last_us\": %.2f}\n",
                c.bshd ? "bshd" : "bhsd", c.backward ? "bwd" : "fwd", c.per_sm, fit, sms, c.batch, c.heads, c.n, c.d,
                c.br, c.bc, c.spin, c.spread, c.prefetch, blocks, bytes, ends.front(), ends[blocks / 2], ends.back());
  }
  return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : 1;
}
