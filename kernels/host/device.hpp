// device.hpp — the CUDA runtime as flashlab-gpu uses it: checked calls, device buffers that free
// themselves, and the facts of the device a trace header records.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace flashlab::gpu {

/// Throws std::runtime_error("<what>: <CUDA error text>") unless err is cudaSuccess.
void check(cudaError_t err, const char* what);

/// `count` elements of T in device memory (cudaMalloc), freed by the destructor.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count > 0) check(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)), "cudaMalloc");
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) { o.ptr_ = nullptr, o.count_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    check(cudaMemcpy(ptr_, host.data(), std::min(host.size(), count_) * sizeof(T), cudaMemcpyHostToDevice),
          "cudaMemcpy to device");
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) check(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
    return host;
  }
  /// Sets every byte to `value` (0xFF poisons fp16/bf16/fp32 data with NaNs).
  void fill_bytes(int value) {
    if (count_ > 0) check(cudaMemset(ptr_, value, bytes()), "cudaMemset");
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

/// The device a run used, for trace headers and reports.
struct DeviceInfo {
  std::string name;     // e.g. "NVIDIA H200"
  std::string driver;   // kernel module version from /proc/driver/nvidia/version, else the CUDA driver API version
  std::string runtime;  // CUDA runtime version, e.g. "13.0"
  int sms = 0;
  int cc_major = 0, cc_minor = 0;
};
DeviceInfo device_info();

/// Times `fn` (which launches work on the default stream) with CUDA events: `warmup` untimed
/// calls, then `reps` timed ones. Returns each timed call's milliseconds.
template <class F>
std::vector<float> time_launches(F&& fn, int warmup, int reps) {
  for (int k = 0; k < warmup; ++k) fn();
  check(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<float> ms;
  for (int k = 0; k < reps; ++k) {
    check(cudaEventRecord(start), "cudaEventRecord");
    fn();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

}  // namespace flashlab::gpu
