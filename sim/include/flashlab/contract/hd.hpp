// hd.hpp — one macro that marks small functions as usable on the host and on a CUDA device.
// The tiling, mask and event headers use it so that sim/ and kernels/ share one copy of the
// index math (the CuTe habit: host+device helpers tested on the host without CUDA).
#pragma once

#if defined(__CUDACC__)
#define FL_HD __host__ __device__ __forceinline__
#else
#define FL_HD inline
#endif
