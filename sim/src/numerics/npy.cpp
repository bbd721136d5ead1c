// npy.cpp — reading and writing NumPy .npy files (npy.hpp).
#include "flashlab/numerics/npy.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include <Eigen/Core>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flashlab/contract/error.hpp"

namespace flashlab {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kMaxHeader = std::size_t(1) << 20;          // a header is a few dozen bytes
constexpr std::int64_t kMaxElements = std::int64_t(1) << 40;
constexpr const char* kTypes = "'<f2' (fp16), '<f4' (fp32) or '<u2' (bf16 bits)";

std::size_t item_bytes(NpyType t) { return t == NpyType::f4 ? 4 : 2; }

// The parsed header: element type, shape, where the data starts and how many bytes it takes.
struct Header {
  NpyType type = NpyType::f4;
  std::vector<std::int64_t> shape;
  std::size_t data_offset = 0, data_bytes = 0;
};

// A cursor over the header dict, a Python literal. Everything it does not expect is refused.
class DictParser {
 public:
  explicit DictParser(std::string_view text) : s_(text) {}

  Header parse() {
    Header h;
    bool descr = false, order = false, shape = false;
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      skip_space();
      if (key == "descr" && !descr) {
        h.type = parse_descr(string_literal());
        descr = true;
      } else if (key == "fortran_order" && !order) {
        if (boolean()) throw ConfigError("npy fortran_order", "True", "False: the elements in C order (row-major)");
        order = true;
      } else if (key == "shape" && !shape) {
        h.shape = tuple();
        shape = true;
      } else {
        throw ConfigError("npy header", "key '" + key + "'", "each of 'descr', 'fortran_order', 'shape' once");
      }
      skip_space();
      if (peek() == ',') ++at_;
      else if (peek() != '}') fail("',' or '}' after the value of '" + key + "'");
    }
    ++at_;
    skip_space();
    if (at_ != s_.size()) fail("only spaces and a newline after the dict");
    if (!descr || !order || !shape) throw ConfigError("npy header", "a dict without " + std::string(!descr ? "'descr'" : !order ? "'fortran_order'" : "'shape'"), "the keys 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& wanted) const {
    throw ConfigError("npy header", "byte " + std::to_string(at_) + " of the header", wanted);
  }
  char peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("'") + c + "'");
    ++at_;
  }
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("a quoted string");
    const std::size_t end = s_.find(q, at_ + 1);
    if (end == std::string_view::npos || end - at_ > 64) fail("a closed string of at most 64 characters");
    std::string out(s_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.substr(at_, 4) == "True") return at_ += 4, true;
    if (s_.substr(at_, 5) == "False") return at_ += 5, false;
    fail("True or False");
  }
  std::int64_t integer() {
    std::int64_t v = 0;
    const std::size_t start = at_;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') {
      if (v > kMaxElements) throw ConfigError("npy shape", "a dimension over 2^40", "at most 2^40 elements in all");
      v = v * 10 + (s_[at_++] - '0');
    }
    if (at_ == start) fail("a non-negative integer");
    if (peek() == 'L') ++at_;  // Python 2's long suffix, written by old NumPy
    return v;
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> dims;
    expect('(');
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      if (dims.size() == 32) throw ConfigError("npy shape", "more than 32 dimensions", "at most 32 (NumPy's limit)");
      dims.push_back(integer());
      skip_space();
      if (peek() == ',') ++at_;
      else if (peek() != ')') fail("',' or ')' in the shape");
    }
    ++at_;
    return dims;
  }
  static NpyType parse_descr(const std::string& d) {
    if (d == "<f2") return NpyType::f2;
    if (d == "<f4") return NpyType::f4;
    if (d == "<u2") return NpyType::u2;
    if (d == ">f2" || d == ">f4" || d == ">u2")
      throw ConfigError("npy descr", "'" + d + "' (big-endian)",
                        std::string("little-endian ") + kTypes + "; convert with a.astype(a.dtype.newbyteorder('<'))");
    throw ConfigError("npy descr", "'" + d + "'", kTypes);
  }

  std::string_view s_;
  std::size_t at_ = 0;
};

std::uint32_t little_u32(std::string_view b, std::size_t at, std::size_t n) {
  std::uint32_t v = 0;
  for (std::size_t k = 0; k < n; ++k) v |= std::uint32_t(std::uint8_t(b[at + k])) << (8 * k);
  return v;
}

// Parses the prefix of a file (magic, version, length, header). `prefix` must hold at least the
// header; `file_bytes` is the whole file's size, checked against what the shape needs.
Header parse_header(std::string_view prefix, std::uint64_t file_bytes) {
  if (prefix.size() < kMagic.size() || prefix.substr(0, kMagic.size()) != kMagic)
    throw ConfigError("npy magic", "not \\x93NUMPY", "a NumPy .npy file (it starts with \\x93NUMPY)");
  if (prefix.size() < 8) throw ConfigError("npy header", "the file ends after " + std::to_string(prefix.size()) + " bytes", "a version and a header");
  const int major = std::uint8_t(prefix[6]), minor = std::uint8_t(prefix[7]);
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    throw ConfigError("npy version", std::to_string(major) + "." + std::to_string(minor), "1.0, 2.0 or 3.0");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (prefix.size() < 8 + len_bytes)
    throw ConfigError("npy header", "the file ends after " + std::to_string(prefix.size()) + " bytes", "a header length");
  const std::uint32_t len = little_u32(prefix, 8, len_bytes);
  if (len > kMaxHeader)
    throw ConfigError("npy header", std::to_string(len) + " bytes long", "at most 1 MiB (a header is a short dict)");
  const std::size_t start = 8 + len_bytes;
  if (prefix.size() < start + len)
    throw ConfigError("npy header", "the file ends after " + std::to_string(prefix.size()) + " bytes",
                      "the " + std::to_string(len) + "-byte header its length announces");
  Header h = DictParser(prefix.substr(start, len)).parse();
  std::int64_t n = 1;
  for (std::int64_t dim : h.shape) {
    if (dim != 0 && n > kMaxElements / dim)
      throw ConfigError("npy shape", npy_shape_text(h.shape), "at most 2^40 elements");
    n *= dim;
  }
  h.data_offset = start + len;
  h.data_bytes = std::size_t(n) * item_bytes(h.type);
  const std::uint64_t have = file_bytes - h.data_offset;
  if (have != h.data_bytes)
    throw ConfigError("npy data", std::to_string(have) + " bytes",
                      std::to_string(h.data_bytes) + " bytes for shape " + npy_shape_text(h.shape) + " of '" +
                          std::string(npy_descr(h.type)) + "' (" +
                          (have < h.data_bytes ? "the file is truncated" : "bytes after the data") + ")");
  return h;
}

float to_float(NpyType t, const unsigned char* p) {
  switch (t) {
    case NpyType::f2: return float(Eigen::half(Eigen::half_impl::raw_uint16_to_half(std::uint16_t(p[0] | p[1] << 8))));
    case NpyType::u2: return float(Eigen::bfloat16(Eigen::bfloat16_impl::raw_uint16_to_bfloat16(std::uint16_t(p[0] | p[1] << 8))));
    case NpyType::f4: {
      const std::uint32_t bits = little_u32(std::string_view(reinterpret_cast<const char*>(p), 4), 0, 4);
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    }
  }
  return 0;
}

void put_value(std::string& out, NpyType t, float v) {
  std::uint32_t bits = 0;
  switch (t) {
    case NpyType::f2: bits = Eigen::half(v).x; break;
    case NpyType::u2: bits = Eigen::bfloat16(v).value; break;
    case NpyType::f4: std::memcpy(&bits, &v, 4); break;
  }
  for (std::size_t k = 0; k < item_bytes(t); ++k) out += char((bits >> (8 * k)) & 0xff);
}

[[noreturn]] void unreadable(const std::string& path, const std::string& why) {
  throw ConfigError("npy file", path, "a readable NumPy .npy file (" + why + ")");
}

}  // namespace

std::string_view npy_descr(NpyType t) {
  switch (t) {
    case NpyType::f2: return "<f2";
    case NpyType::u2: return "<u2";
    case NpyType::f4: break;
  }
  return "<f4";
}

NpyType npy_type(Dtype t) {
  switch (t) {
    case Dtype::fp16: return NpyType::f2;
    case Dtype::bf16: return NpyType::u2;
    case Dtype::fp32: break;
  }
  return NpyType::f4;
}

std::string npy_shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string encode_npy(const NpyArray& a) {
  std::int64_t n = 1;
  for (std::int64_t dim : a.shape) n *= dim;
  if (n < 0 || std::size_t(n) != a.values.size())
    throw ConfigError("npy shape", npy_shape_text(a.shape),
                      "a shape whose product is the number of values (" + std::to_string(a.values.size()) + ")");
  std::string dict = "{'descr': '" + std::string(npy_descr(a.type)) + "', 'fortran_order': False, 'shape': " +
                     npy_shape_text(a.shape) + ", }";
  // Version 1.0 when the header fits a u16 length; the data starts at a multiple of 64 bytes.
  const bool v1 = dict.size() + 1 + 10 + 64 <= 65535;
  const std::size_t prefix = v1 ? 10 : 12;
  const std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic);
  out += char(v1 ? 1 : 2);
  out += char(0);
  for (std::size_t k = 0; k < prefix - 8; ++k) out += char((dict.size() >> (8 * k)) & 0xff);
  out += dict;
  out.reserve(out.size() + a.values.size() * item_bytes(a.type));
  for (float v : a.values) put_value(out, a.type, v);
  return out;
}

NpyArray decode_npy(std::string_view bytes) {
  const Header h = parse_header(bytes, bytes.size());
  NpyArray a{h.type, h.shape, std::vector<float>(h.data_bytes / item_bytes(h.type))};
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data() + h.data_offset);
  for (std::size_t k = 0; k < a.values.size(); ++k) a.values[k] = to_float(h.type, data + k * item_bytes(h.type));
  return a;
}

NpyArray read_npy(const std::string& path) {
  // Opened without blocking, so that a FIFO is refused by kind instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) unreadable(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    unreadable(path, "not a regular file");
  }
  std::FILE* f = ::fdopen(fd, "rb");
  if (!f) {
    const int e = errno;
    ::close(fd);
    unreadable(path, std::strerror(e));
  }
  // The header first (at most 12 + 1 MiB bytes), then the data once its size matches the file's.
  std::string bytes(std::size_t(std::min<std::int64_t>(st.st_size, std::int64_t(12 + kMaxHeader))), '\0');
  bool ok = std::fread(bytes.data(), 1, bytes.size(), f) == bytes.size();
  try {
    if (ok) {
      const Header h = parse_header(bytes, std::uint64_t(st.st_size));
      const std::size_t have = bytes.size();
      bytes.resize(h.data_offset + h.data_bytes);
      if (bytes.size() > have) ok = std::fread(bytes.data() + have, 1, bytes.size() - have, f) == bytes.size() - have;
    }
  } catch (const ConfigError& err) {
    std::fclose(f);
    throw ConfigError(path + ": " + err.field(), err.value(), err.allowed());
  }
  const int e = errno;
  std::fclose(f);
  if (!ok) unreadable(path, std::strerror(e));
  try {
    return decode_npy(bytes);
  } catch (const ConfigError& err) {
    throw ConfigError(path + ": " + err.field(), err.value(), err.allowed());
  }
}

}  // namespace flashlab
