// wgmma_ceiling.cu — the Hopper tensor cores' asynchronous warpgroup matmul (wgmma.mma_async,
// PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate") on the H200, for V3's time model
// (issue 27 items 2 and 5). FlashAttention-3 runs its GEMMs as wgmma (S = Q K^T with both operands in
// shared memory, "SS"; O += P~ V with P~ in registers, "RS"); FA2, V1 and V2 run mma.sync, whose rate
// scripts/gpu/ceilings.cu measures. This program measures, on fp16 inputs with fp32 accumulators:
//   - the rate (TFLOP/s) of m64nNk16 for N = 128 and 256, SS and RS, with 1, 2 (and 3 for N = 128)
//     warpgroups per thread block and one thread block per SM: each warpgroup issues batches of
//     kBatch wgmma into one accumulator, commits each batch as a group and waits until at most one
//     group is in flight (as CUTLASS's Hopper mainloops do);
//   - the latency (cycles, clock64) of one wgmma m64nNk16 SS issued, committed and waited for alone,
//     by one warpgroup on one SM.
// Every configuration is first run on all-ones inputs and its accumulators checked: each must equal
// 16 x (the wgmma issued), the sum over k of 1 x 1, else the figure is reported as null with the
// reason. The timed runs use the same inputs (all ones) — the rate of the tensor cores does not
// depend on the values, though their power does. Each figure is the median of kReps runs timed with
// CUDA events around one launch (nothing else between the events), after a warm-up launch; beside it
// the SM clock the last timed launch ran at (sm_clock.cuh: the rate per cycle is the rate over it).
//
// Build and run: scripts/gpu/wgmma_ceiling.sh OUTDIR (nvcc -O3 -arch=sm_90a; writes OUTDIR/wgmma.json).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.cuh"
#include "sm_clock.cuh"
#include "wgmma_desc.cuh"

namespace {

constexpr int kBatch = 4;  // wgmma per commit group
constexpr int kReps = 7;
constexpr int kSmemBytes = 16384;  // A: 64 x 16 fp16 (2 KiB) at 0, B: N x 16 fp16 (up to 8 KiB) at 4 KiB

// Operands through wgmma_desc.cuh's descriptor: they are all ones, so the layout its offsets describe
// does not change the result; the offsets keep every core matrix inside the buffer.

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kInFlight>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kInFlight) : "memory");
}

// wgmma m64n128k16, fp32 += fp16 x fp16: A and B from shared memory through descriptors (SS)
__device__ __forceinline__ void wgmma_ss_n128(float* d, std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// the same with A from registers (RS: FA3's P~ V, the probabilities kept in registers)
__device__ __forceinline__ void wgmma_rs_n128(float* d, const std::uint32_t* a_reg, std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a_reg[0]), "r"(a_reg[1]), "r"(a_reg[2]), "r"(a_reg[3]), "l"(desc_b), "r"(scale_d));
}

// wgmma m64n256k16, fp32 += fp16 x fp16: A and B from shared memory through descriptors (SS)
__device__ __forceinline__ void wgmma_ss_n256(float* d, std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// the same with A from registers (RS: FA3's P~ V, the probabilities kept in registers)
__device__ __forceinline__ void wgmma_rs_n256(float* d, const std::uint32_t* a_reg, std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "r"(a_reg[0]), "r"(a_reg[1]), "r"(a_reg[2]), "r"(a_reg[3]), "l"(desc_b), "r"(scale_d));
}

template <int N, bool kRs>
__device__ __forceinline__ void mma(float* d, const std::uint32_t* a, std::uint64_t da, std::uint64_t db) {
  if constexpr (N == 128) {
    if constexpr (kRs) wgmma_rs_n128(d, a, db, 1);
    else wgmma_ss_n128(d, da, db, 1);
  } else {
    if constexpr (kRs) wgmma_rs_n256(d, a, db, 1);
    else wgmma_ss_n256(d, da, db, 1);
  }
}

// Each warpgroup of the block issues `groups` commit groups of kBatch wgmma into its accumulators;
// every thread writes the smallest and largest of its accumulators (the check reads them).
template <int N, bool kRs>
__global__ void rate_kernel(float* out, int groups, unsigned long long* clk) {
  clock_begin(clk);
  extern __shared__ __align__(128) unsigned char smem[];
  for (int k = threadIdx.x; k < kSmemBytes / 4; k += blockDim.x)
    reinterpret_cast<std::uint32_t*>(smem)[k] = 0x3C003C00u;  // two fp16 ones
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the generic-proxy writes, seen by wgmma
  const auto base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  const std::uint64_t da = make_desc(base), db = make_desc(base + 4096);
  const std::uint32_t a[4] = {0x3C003C00u, 0x3C003C00u, 0x3C003C00u, 0x3C003C00u};
  float d[N / 2];
#pragma unroll
  for (int k = 0; k < N / 2; ++k) d[k] = 0.f;
  for (int g = 0; g < groups; ++g) {
    fence();
#pragma unroll
    for (int k = 0; k < kBatch; ++k) mma<N, kRs>(d, a, da, db);
    commit();
    wait<1>();
  }
  wait<0>();
  clock_end(clk);
  float lo = d[0], hi = d[0];
#pragma unroll
  for (int k = 1; k < N / 2; ++k) lo = fminf(lo, d[k]), hi = fmaxf(hi, d[k]);
  out[2 * (blockIdx.x * blockDim.x + threadIdx.x)] = lo;
  out[2 * (blockIdx.x * blockDim.x + threadIdx.x) + 1] = hi;
}

// One warpgroup, one wgmma SS at a time: issue, commit, wait; cycles per wgmma in out_cycles.
template <int N>
__global__ void latency_kernel(float* out, long long* out_cycles, int reps) {
  extern __shared__ __align__(128) unsigned char smem[];
  for (int k = threadIdx.x; k < kSmemBytes / 4; k += blockDim.x) reinterpret_cast<std::uint32_t*>(smem)[k] = 0x3C003C00u;
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  const auto base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  const std::uint64_t da = make_desc(base), db = make_desc(base + 4096);
  const std::uint32_t a[4] = {0, 0, 0, 0};
  float d[N / 2];
#pragma unroll
  for (int k = 0; k < N / 2; ++k) d[k] = 0.f;
  const long long t0 = clock64();
  for (int r = 0; r < reps; ++r) {
    fence();
    mma<N, false>(d, a, da, db);
    commit();
    wait<0>();
  }
  const long long t1 = clock64();
  if (threadIdx.x == 0) *out_cycles = (t1 - t0) / reps;
  out[threadIdx.x] = d[0];
}

struct Rate {
  double tflops = -1;  // -1: not measured (the check failed or the launch was refused)
  double sm_clock_ghz = -1;  // the SM clock of the last timed launch (sm_clock.cuh)
  const char* why = "";
};

template <int N, bool kRs>
Rate measure_rate(int warpgroups, int sms) {
  const int threads = 128 * warpgroups;
  auto kernel = rate_kernel<N, kRs>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  float* out = nullptr;
  CHECK(cudaMalloc(&out, sizeof(float) * 2 * sms * threads));
  Rate r;
  // the check: 8 groups, every accumulator 16 x 8 x kBatch
  const int check_groups = 8;
  kernel<<<sms, threads, kSmemBytes>>>(out, check_groups, nullptr);
  if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
    r.why = "launch failed";
    cudaGetLastError();
    cudaFree(out);
    return r;
  }
  std::vector<float> h(std::size_t(2) * sms * threads);
  CHECK(cudaMemcpy(h.data(), out, sizeof(float) * h.size(), cudaMemcpyDeviceToHost));
  const float want = 16.f * check_groups * kBatch;
  for (float x : h)
    if (x != want) {
      r.why = "accumulators differ from 16 x the wgmma issued";
      cudaFree(out);
      return r;
    }
  const int groups = 4096;
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  SmClock clock(sms);
  kernel<<<sms, threads, kSmemBytes>>>(out, groups, nullptr);  // warm-up
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int k = 0; k < kReps; ++k) {
    CHECK(cudaEventRecord(e0));
    kernel<<<sms, threads, kSmemBytes>>>(out, groups, clock.device());
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  const double flops = double(sms) * warpgroups * groups * kBatch * (2.0 * 64 * N * 16);
  r.tflops = flops / (ms[ms.size() / 2] * 1e-3) / 1e12;
  r.sm_clock_ghz = clock.ghz();
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  CHECK(cudaFree(out));
  return r;
}

template <int N>
long long measure_latency() {
  auto kernel = latency_kernel<N>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  float* out = nullptr;
  long long* cyc = nullptr;
  CHECK(cudaMalloc(&out, sizeof(float) * 128));
  CHECK(cudaMalloc(&cyc, sizeof(long long)));
  kernel<<<1, 128, kSmemBytes>>>(out, cyc, 1024);
  CHECK(cudaDeviceSynchronize());
  long long c = 0;
  CHECK(cudaMemcpy(&c, cyc, sizeof c, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(out));
  CHECK(cudaFree(cyc));
  return c;
}

void print_rate(const char* name, Rate r, bool last = false) {
  if (r.tflops < 0) std::printf("    \"%s\": {\"tflops\": null, \"why\": \"%s\"}%s\n", name, r.why, last ? "" : ",");
  else std::printf("    \"%s\": {\"tflops\": %.1f, \"sm_clock_ghz\": %.4f}%s\n", name, r.tflops, r.sm_clock_ghz, last ? "" : ",");
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  std::printf("{\n  \"device\": \"%s\", \"sms\": %d, \"sm_clock_khz\": %d,\n", prop.name, sms, clock_khz);
  std::printf("  \"wgmma_f16_f32acc\": {\n");
  print_rate("ss_n128_1wg", measure_rate<128, false>(1, sms));
  print_rate("ss_n128_2wg", measure_rate<128, false>(2, sms));
  print_rate("ss_n128_3wg", measure_rate<128, false>(3, sms));
  print_rate("rs_n128_1wg", measure_rate<128, true>(1, sms));
  print_rate("rs_n128_2wg", measure_rate<128, true>(2, sms));
  print_rate("rs_n128_3wg", measure_rate<128, true>(3, sms));
  print_rate("ss_n256_1wg", measure_rate<256, false>(1, sms));
  print_rate("ss_n256_2wg", measure_rate<256, false>(2, sms));
  print_rate("rs_n256_1wg", measure_rate<256, true>(1, sms));
  print_rate("rs_n256_2wg", measure_rate<256, true>(2, sms), true);
  std::printf("  },\n");
  std::printf("  \"wgmma_latency_cycles\": {\"ss_n128\": %lld, \"ss_n256\": %lld}\n", measure_latency<128>(),
              measure_latency<256>());
  std::printf("}\n");
  return 0;
}
