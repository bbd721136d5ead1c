// libFuzzer target: arbitrary bytes into the trace readers (both forms). A reader must either
// throw flashlab::ConfigError or return a trace; any crash, sanitizer report, hang or allocation
// over -malloc_limit_mb is a finding. A trace it accepts must round-trip: binary exactly, text
// to the same text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "flashlab/contract/error.hpp"
#include "flashlab/trace/trace_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flashlab;
  Trace t;
  try {
    t = decode_trace(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const ConfigError&) {
    return 0;
  }
  const std::string bin = encode_trace(t, TraceFormat::binary);
  const std::string txt = encode_trace(t, TraceFormat::text);
  if (encode_trace(decode_trace(bin), TraceFormat::binary) != bin) {
    std::fprintf(stderr, "binary form did not round-trip\n");
    std::abort();
  }
  if (encode_trace(decode_trace(txt), TraceFormat::text) != txt) {
    std::fprintf(stderr, "text form did not round-trip\n");
    std::abort();
  }
  return 0;
}
