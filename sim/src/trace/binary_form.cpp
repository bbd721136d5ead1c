// binary_form.cpp — the binary form: the 40-byte Event records behind a small header
// (docs/events.md "Binary form"). Little-endian, as the kernels' device buffers are.
#include <bit>
#include <cstring>

#include "flashlab/contract/error.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "forms.hpp"

namespace flashlab::trace_form {

static_assert(std::endian::native == std::endian::little,
              "the binary trace form is little-endian: the Event records are written as they are in memory");

namespace {

template <class T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

// Reads fixed-size values, checking that each lies inside the buffer.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  std::size_t left() const { return bytes_.size() - at_; }
  std::size_t at() const { return at_; }
  void need(std::uint64_t n, const char* what) const {
    if (n > left())
      throw ConfigError("trace binary " + std::string(what), "ends at byte " + std::to_string(bytes_.size()),
                        std::to_string(n) + " bytes from byte " + std::to_string(at_) + " (the file is truncated)");
  }
  std::string_view take(std::uint64_t n, const char* what) {
    need(n, what);
    const std::string_view v = bytes_.substr(at_, std::size_t(n));
    at_ += std::size_t(n);
    return v;
  }
  template <class T>
  T get(const char* what) {
    T v;
    std::memcpy(&v, take(sizeof(T), what).data(), sizeof(T));
    return v;
  }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

[[noreturn]] void bad(const std::string& what, const std::string& value, const std::string& allowed) {
  throw ConfigError("trace binary " + what, value, allowed);
}

}  // namespace

std::size_t binary_begin(std::string& out, const TraceHeader& h, std::uint64_t count) {
  const std::string json = header_json(h);
  out += kBinaryMagic;
  put<std::uint32_t>(out, kTraceVersion);
  put<std::uint32_t>(out, std::uint32_t(json.size()));
  out += json;
  const std::size_t at = out.size();
  put<std::uint64_t>(out, count);
  return at;
}

void binary_events(std::string& out, std::span<const Event> events) {
  out.append(reinterpret_cast<const char*>(events.data()), events.size_bytes());
}

void binary_end(std::string& out, const std::vector<BlockStats>& stats) {
  put<std::uint32_t>(out, std::uint32_t(stats.size()));
  for (const BlockStats& b : stats) {
    put<std::int64_t>(out, b.i);
    put<std::uint32_t>(out, std::uint32_t(b.snapshots.size()));
    for (const StatSnapshot& s : b.snapshots) {
      put<std::uint32_t>(out, s.step);
      put<std::int64_t>(out, s.j);
      put<std::uint32_t>(out, std::uint32_t(s.m.size()));
      out.append(reinterpret_cast<const char*>(s.m.data()), s.m.size() * sizeof(float));
      out.append(reinterpret_cast<const char*>(s.l.data()), s.l.size() * sizeof(float));
    }
  }
  out += kBinaryEnd;
}

namespace {

// Magic, version and header; leaves r at the event count.
FileStart read_binary_start(Reader& r) {
  if (r.take(kBinaryMagic.size(), "magic") != kBinaryMagic)
    bad("magic", "other bytes", "\"FLTRACE\\x1a\" (docs/events.md \"Binary form\")");
  FileStart s;
  s.format = TraceFormat::binary;
  s.version = r.get<std::uint32_t>("version");
  if (!readable_version(s.version)) bad("version", std::to_string(s.version), readable_versions());
  const auto header_bytes = r.get<std::uint32_t>("header size");
  if (header_bytes > kMaxTraceHeaderBytes)
    bad("header size", std::to_string(header_bytes), "at most " + std::to_string(kMaxTraceHeaderBytes) + " bytes");
  s.header = parse_header(r.take(header_bytes, "header"));
  return s;
}

// The bytes after the header, read for decode_body.
class BinaryBody final : public BodySource {
 public:
  BinaryBody(Reader& r, std::uint32_t version) : r_(r), version_(version) {
    left_ = r_.get<std::uint64_t>("event count");
    if (left_ > r_.left() / sizeof(Event))
      bad("event count", std::to_string(left_),
          "at most the " + std::to_string(r_.left() / sizeof(Event)) + " records of 40 bytes that the file holds");
  }
  bool next_event(Event& e) override {
    if (left_ == 0) return false;
    --left_;
    std::memcpy(&e, r_.take(sizeof(Event), "events").data(), sizeof(Event));
    // versions 1 and 2 numbered `none` 9 (the backward's tensors took 9..16 in version 3), version
    // 3 numbered it 17 (split-KV's Oacc and Lacc took 17, 18 in version 4); a byte above `none`
    // there is no tensor (255: check_event refuses it)
    const std::uint8_t old_none = version_ < 3 ? 9 : version_ < 4 ? 17 : 0;
    if (old_none != 0 && std::uint8_t(e.tensor) >= old_none)
      e.tensor = std::uint8_t(e.tensor) == old_none ? Tensor::none : Tensor(255);
    return true;
  }
  std::uint64_t stats_count() override { return r_.get<std::uint32_t>("statistics count"); }
  std::int64_t stats_block(std::uint64_t& snapshots) override {
    const auto i = r_.get<std::int64_t>("statistics block");
    snapshots = r_.get<std::uint32_t>("snapshot count");
    return i;
  }
  std::uint64_t snapshot(StatSnapshot& s) override {
    s.step = r_.get<std::uint32_t>("snapshot step");
    s.j = r_.get<std::int64_t>("snapshot j");
    return r_.get<std::uint32_t>("snapshot rows");
  }
  void values(StatSnapshot& s, std::uint64_t rows) override {
    r_.need(2 * rows * sizeof(float), "snapshot values");
    s.m.resize(std::size_t(rows));
    s.l.resize(std::size_t(rows));
    std::memcpy(s.m.data(), r_.take(rows * sizeof(float), "m").data(), std::size_t(rows) * sizeof(float));
    std::memcpy(s.l.data(), r_.take(rows * sizeof(float), "l").data(), std::size_t(rows) * sizeof(float));
  }
  void end() override {
    if (r_.take(kBinaryEnd.size(), "end marker") != kBinaryEnd)
      bad("end marker", "other bytes at byte " + std::to_string(r_.at() - kBinaryEnd.size()), "\"FLTREND\\x1a\"");
    if (r_.left() != 0) bad("length", std::to_string(r_.left()) + " bytes after the end marker", "nothing after it");
  }
  [[noreturn]] void fail(Field f, const std::string& value, const std::string& allowed) const override {
    bad(f == Field::stats_count ? "statistics count" : f == Field::stats_block ? "statistics block" : "snapshot rows",
        value, allowed);
  }

 private:
  Reader& r_;
  std::uint32_t version_;
  std::uint64_t left_ = 0;  // events not yet read
};

constexpr FormReader<Reader, BinaryBody> kBinaryForm{read_binary_start};

}  // namespace

FileStart binary_start(std::string_view bytes) { return kBinaryForm.start(bytes); }
Trace binary_decode(std::string_view bytes) { return kBinaryForm.decode(bytes); }

}  // namespace flashlab::trace_form
