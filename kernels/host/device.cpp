// device.cpp — checked CUDA calls and device facts (device.hpp).
#include "device.hpp"

#include <fstream>
#include <regex>
#include <stdexcept>

namespace flashlab::gpu {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

namespace {

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." -> "580.159.04"
std::string kernel_module_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return "";
  std::smatch m;
  if (std::regex_search(line, m, std::regex(R"(Kernel Module\s+([0-9][0-9.]*))"))) return m[1];
  return "";
}

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

DeviceInfo device_info() {
  DeviceInfo d;
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  d.name = prop.name;
  d.sms = prop.multiProcessorCount;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  int driver = 0, runtime = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  d.runtime = cuda_version_text(runtime);
  d.driver = kernel_module_version();
  if (d.driver.empty()) d.driver = "CUDA driver API " + cuda_version_text(driver);
  return d;
}

}  // namespace flashlab::gpu
