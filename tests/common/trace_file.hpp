// trace_file.hpp — editing an encoded trace file in place, for hostile-header tests and the fuzzer's
// seeds (fuzz/make_seeds.cpp includes it too). Header-only: it needs nothing but the standard library.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace flashlab::test {

/// An encoded trace file (either form) with its header JSON replaced by `json`, the rest unchanged:
/// text, the "header " line's JSON; binary (magic 8, version 4, header size 4, header), the bytes
/// after the u32 header size at offset 12, which follows.
inline std::string with_header_json(const std::string& file, const std::string& json) {
  if (file.rfind("FLTRACE", 0) == 0) {
    std::uint32_t old = 0;
    std::memcpy(&old, file.data() + 12, 4);
    const auto size = std::uint32_t(json.size());
    std::string out = file.substr(0, 12);
    out.append(reinterpret_cast<const char*>(&size), 4);
    return out + json + file.substr(16 + old);
  }
  const std::size_t h0 = file.find("\nheader ") + 8, h1 = file.find('\n', h0);
  return file.substr(0, h0) + json + file.substr(h1);
}

}  // namespace flashlab::test
