// launchers.hpp — one launcher per algorithm, defined in its .cu file (used by api.cpp).
#pragma once

#include "flashlab/kernels/api.hpp"

namespace flashlab::gpu {

void launch_standard(const Args& a, const TraceBuffers* trace, cudaStream_t stream);  // standard.cu
void launch_v1(const Args& a, const TraceBuffers* trace, cudaStream_t stream);        // v1.cu
void launch_v2(const Args& a, const TraceBuffers* trace, cudaStream_t stream);        // v2.cu
void launch_v2_split(const Args& a, const TraceBuffers* trace, cudaStream_t stream);  // v2_split.cu
void launch_v1_backward(const Args& a, const TraceBuffers* trace, cudaStream_t stream);  // v1_backward.cu
void launch_v2_backward(const Args& a, const TraceBuffers* trace, cudaStream_t stream);  // v2_backward.cu

}  // namespace flashlab::gpu
