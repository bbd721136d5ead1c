// text_form.cpp — the line-per-event text form (docs/events.md "Text form").
#include <charconv>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "flashlab/executor/counters.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "forms.hpp"

namespace flashlab::trace_form {
namespace {

template <class T>
void put_int(std::string& out, T v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void put_float(std::string& out, float v) {
  char buf[48];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// The lines of a text trace, numbered from 1 for errors.
class Lines {
 public:
  explicit Lines(std::string_view text) : rest_(text) {}
  std::string_view next(const char* expecting) {
    if (rest_.empty())
      throw ConfigError("trace text line " + std::to_string(line_ + 1), "end of file",
                        std::string(expecting) + " (the file is truncated)");
    const std::size_t nl = rest_.find('\n');
    if (nl == std::string_view::npos)
      throw ConfigError("trace text line " + std::to_string(line_ + 1), "no newline at the end",
                        std::string(expecting) + " ending in a newline (the file is truncated)");
    std::string_view line = rest_.substr(0, nl);
    rest_.remove_prefix(nl + 1);
    ++line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  }
  std::uint64_t number() const { return line_; }
  bool at_end() const { return rest_.empty(); }
  /// True when the next line (up to its newline, or all that is left) is longer than n bytes.
  bool next_longer_than(std::size_t n) const {
    const std::size_t nl = rest_.find('\n');
    return (nl == std::string_view::npos ? rest_.size() : nl) > n;
  }

 private:
  std::string_view rest_;
  std::uint64_t line_ = 0;
};

// Space-separated fields of one line.
class Fields {
 public:
  Fields(std::string_view line, const Lines& lines) : rest_(line), line_no_(lines.number()) {}
  std::string_view word(const char* what) {
    if (rest_.empty()) fail(what, "nothing", "a value");
    const std::size_t sp = rest_.find(' ');
    std::string_view w = rest_.substr(0, sp);
    rest_.remove_prefix(sp == std::string_view::npos ? rest_.size() : sp + 1);
    if (w.empty()) fail(what, "an empty field", "fields separated by one space");
    return w;
  }
  template <class T>
  T integer(const char* what) {
    const std::string_view w = word(what);
    T v{};
    const auto r = std::from_chars(w.data(), w.data() + w.size(), v);
    if (r.ec != std::errc() || r.ptr != w.data() + w.size())
      fail(what, w, "a decimal integer from " + std::to_string(+std::numeric_limits<T>::min()) + " to " +
                        std::to_string(+std::numeric_limits<T>::max()));
    return v;
  }
  float real(const char* what) {
    const std::string_view w = word(what);
    float v = 0;
    const auto r = std::from_chars(w.data(), w.data() + w.size(), v);
    if (r.ec != std::errc() || r.ptr != w.data() + w.size()) fail(what, w, "a number (inf, -inf and nan allowed)");
    return v;
  }
  void expect(std::string_view keyword) {
    const std::string_view w = word("keyword");
    if (w == keyword) return;
    std::string quoted(1, '"');
    quoted.append(keyword).push_back('"');
    fail("keyword", w, quoted);
  }
  void end() {
    if (!rest_.empty()) fail("end of line", rest_, "no more fields");
  }
  bool more() const { return !rest_.empty(); }
  [[noreturn]] void fail(const char* what, std::string_view value, const std::string& allowed) const {
    throw ConfigError("trace text line " + std::to_string(line_no_) + " " + what,
                      std::string(value.substr(0, 80)), allowed);
  }

 private:
  std::string_view rest_;
  std::uint64_t line_no_;
};

template <class E, int N>
E by_name(Fields& f, const char* what, std::string_view w) {
  for (int k = 0; k < N; ++k)
    if (to_string(E(k)) == w) return E(k);
  f.fail(what, w, "a name of docs/events.md \"Fields\"");
}

// One field of a line: an integer in decimal, or a name.
template <class T>
void put_field(std::string& out, const T& v) {
  if constexpr (std::is_integral_v<T>) put_int(out, v);
  else out += v;
}

// The fields separated by one space, then a newline.
template <class... T>
void put_line(std::string& out, const T&... fields) {
  ((put_field(out, fields), out += ' '), ...);
  out.back() = '\n';
}

// The agent as the text form names it: "producer", "wg<k>" for consumer warpgroup k (kAgentBlock
// is never written: a line without the field is the whole block's).
std::string agent_name(std::uint8_t a) {
  return a == kAgentProducer ? std::string("producer") : "wg" + std::to_string(int(a) - kAgentConsumer);
}

// After the equation a version-6 line may name its agent; anything else is one field too many.
std::uint8_t parse_agent(Fields& f, std::string_view w) {
  if (w == "producer") return kAgentProducer;
  int k = -1;
  if (w.size() > 2 && w.substr(0, 2) == "wg") {
    const auto r = std::from_chars(w.data() + 2, w.data() + w.size(), k);
    if (r.ec != std::errc() || r.ptr != w.data() + w.size()) k = -1;
  }
  if (k < 0 || k > 255 - kAgentConsumer)
    f.fail("end of line", w, "no more fields, or the agent (format 6): producer or wgK (consumer warpgroup K, 0 to 253)");
  return std::uint8_t(kAgentConsumer + k);
}

void put_event(std::string& out, const Event& e) {
  put_line(out, e.launch, e.block, e.step, to_string(e.op), to_string(e.tensor), e.i, e.j, e.rows, e.cols, e.bytes,
           e.warp, to_string(e.eq));
  if (e.agent != kAgentBlock) {  // version 6: the issuing agent, only where it is not the whole block
    out.back() = ' ';
    out += agent_name(e.agent);
    out += '\n';
  }
}

// One event line: "launch block step op ..." (version 2), or without the launch (version 1).
Event get_event(Fields& f, std::uint32_t version) {
  Event e;
  if (version >= 2) e.launch = f.integer<std::uint16_t>("launch");
  e.block = f.integer<std::uint32_t>("block");
  e.step = f.integer<std::uint32_t>("step");
  e.op = by_name<Op, kOpCount>(f, "op", f.word("op"));
  e.tensor = by_name<Tensor, kTensorCount + 1>(f, "tensor", f.word("tensor"));
  e.i = f.integer<std::int32_t>("i");
  e.j = f.integer<std::int32_t>("j");
  e.rows = f.integer<std::uint32_t>("rows");
  e.cols = f.integer<std::uint32_t>("cols");
  e.bytes = f.integer<std::uint64_t>("bytes");
  e.warp = f.integer<std::int16_t>("warp");
  e.eq = by_name<Eq, kEqCount>(f, "eq", f.word("eq"));
  if (version >= 6 && f.more()) e.agent = parse_agent(f, f.word("agent"));
  f.end();
  return e;
}

void put_values(std::string& out, char name, const std::vector<float>& v) {
  out += name;
  for (float x : v) {
    out += ' ';
    put_float(out, x);
  }
  out += '\n';
}

std::vector<float> get_values(Lines& lines, char name, std::size_t rows) {
  const std::string_view line = lines.next(name == 'm' ? "the m values" : "the l values");
  Fields f(line, lines);
  f.expect(std::string_view(&name, 1));
  if (line.size() < 2 * rows)  // each value takes at least two characters: allocate only what can be there
    f.fail(name == 'm' ? "m" : "l", std::to_string(line.size()) + " characters",
           std::to_string(rows) + " values separated by spaces");
  std::vector<float> v(rows);
  for (float& x : v) x = f.real(name == 'm' ? "m" : "l");
  f.end();
  return v;
}

}  // namespace

}  // namespace flashlab::trace_form

std::string flashlab::event_line(const Event& e) {
  std::string s;
  trace_form::put_event(s, e);
  s.pop_back();
  return s;
}

namespace flashlab::trace_form {

void text_begin(std::string& out, const TraceHeader& h) {
  out += kTextMagic;
  put_int(out, kTraceVersion);
  out += "\nheader ";
  out += header_json(h);
  out += "\nevents\n";
}

void text_events(std::string& out, std::span<const Event> events) {
  for (const Event& e : events) put_event(out, e);
}

void text_end(std::string& out, const std::vector<BlockStats>& stats) {
  put_line(out, std::string_view("stats"), stats.size());
  for (const BlockStats& b : stats) {
    put_line(out, std::string_view("block"), b.i, b.snapshots.size());
    for (const StatSnapshot& s : b.snapshots) {
      put_line(out, std::string_view("snap"), s.step, s.j, s.m.size());
      put_values(out, 'm', s.m);
      put_values(out, 'l', s.l);
    }
  }
  out += "end\n";
}

namespace {

// The first line (magic and version) and the header line.
FileStart read_text_start(Lines& lines) {
  FileStart s;
  s.format = TraceFormat::text;
  {
    Fields f(lines.next("the first line"), lines);
    f.expect("flashlab-trace");
    f.expect("text");
    s.version = f.integer<std::uint32_t>("version");
    if (!readable_version(s.version)) f.fail("version", std::to_string(s.version), readable_versions());
    f.end();
  }
  // "header " + at most kMaxTraceHeaderBytes of JSON (+ "\r"): a longer line is refused as too long
  // before its newline is looked for, as the binary form refuses a header size over the cap.
  if (lines.next_longer_than(7 + kMaxTraceHeaderBytes + 1))
    throw ConfigError("trace header size", "more than " + std::to_string(kMaxTraceHeaderBytes) + " bytes",
                      "at most " + std::to_string(kMaxTraceHeaderBytes) + " bytes");
  const std::string_view line = lines.next("the header line");
  if (line.substr(0, 7) != "header ") Fields(line, lines).fail("keyword", line, "\"header {json}\"");
  s.header = parse_header(line.substr(7));
  return s;
}

// The lines after the header, read for decode_body.
class TextBody final : public BodySource {
 public:
  TextBody(Lines& lines, std::uint32_t version) : lines_(lines), version_(version) {
    Fields(lines_.next("\"events\""), lines_).expect("events");
  }
  bool next_event(Event& e) override {
    line_ = lines_.next("an event line or \"stats N\"");
    if (line_.substr(0, 6) == "stats ") return false;
    Fields f(line_, lines_);
    e = get_event(f, version_);
    return true;
  }
  std::uint64_t stats_count() override {  // the line that ended the events
    Fields f(line_, lines_);
    f.expect("stats");
    const auto n = f.integer<std::uint64_t>("count");
    f.end();
    return n;
  }
  std::int64_t stats_block(std::uint64_t& snapshots) override {
    Fields f(lines_.next("\"block I N\""), lines_);
    f.expect("block");
    const auto i = f.integer<std::int64_t>("i");
    snapshots = f.integer<std::uint64_t>("snapshots");
    f.end();
    return i;
  }
  std::uint64_t snapshot(StatSnapshot& s) override {
    Fields f(lines_.next("\"snap STEP J ROWS\""), lines_);
    f.expect("snap");
    s.step = f.integer<std::uint32_t>("step");
    s.j = f.integer<std::int64_t>("j");
    const auto n = f.integer<std::uint64_t>("rows");
    f.end();
    return n;
  }
  void values(StatSnapshot& s, std::uint64_t rows) override {
    s.m = get_values(lines_, 'm', rows);
    s.l = get_values(lines_, 'l', rows);
  }
  void end() override {
    Fields(lines_.next("\"end\""), lines_).expect("end");
    if (!lines_.at_end())
      throw ConfigError("trace text line " + std::to_string(lines_.number() + 1), "more text after \"end\"",
                        "nothing after the end line");
  }
  [[noreturn]] void fail(Field f, const std::string& value, const std::string& allowed) const override {
    const char* name = f == Field::stats_count ? "count" : f == Field::stats_block ? "i" : "rows";
    Fields(line_, lines_).fail(name, value, allowed);
  }

 private:
  Lines& lines_;
  std::uint32_t version_;
  std::string_view line_;  // the last line read by next_event
};

constexpr FormReader<Lines, TextBody> kTextForm{read_text_start};

}  // namespace

FileStart text_start(std::string_view bytes) { return kTextForm.start(bytes); }
Trace text_decode(std::string_view bytes) { return kTextForm.decode(bytes); }

}  // namespace flashlab::trace_form
