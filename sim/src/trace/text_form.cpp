// text_form.cpp — the line-per-event text form (docs/events.md "Text form").
#include <charconv>
#include <cstring>

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
    if (r.ec != std::errc() || r.ptr != w.data() + w.size()) fail(what, w, "an integer in range");
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

void put_event(std::string& out, const Event& e) {
  put_int(out, e.launch);
  out += ' ';
  put_int(out, e.block);
  out += ' ';
  put_int(out, e.step);
  out += ' ';
  out += to_string(e.op);
  out += ' ';
  out += to_string(e.tensor);
  out += ' ';
  put_int(out, e.i);
  out += ' ';
  put_int(out, e.j);
  out += ' ';
  put_int(out, e.rows);
  out += ' ';
  put_int(out, e.cols);
  out += ' ';
  put_int(out, e.bytes);
  out += ' ';
  put_int(out, e.warp);
  out += ' ';
  out += to_string(e.eq);
  out += '\n';
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
  out += "stats ";
  put_int(out, stats.size());
  out += '\n';
  for (const BlockStats& b : stats) {
    out += "block ";
    put_int(out, b.i);
    out += ' ';
    put_int(out, b.snapshots.size());
    out += '\n';
    for (const StatSnapshot& s : b.snapshots) {
      out += "snap ";
      put_int(out, s.step);
      out += ' ';
      put_int(out, s.j);
      out += ' ';
      put_int(out, s.m.size());
      out += '\n';
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

}  // namespace

FileStart text_start(std::string_view bytes) {
  Lines lines(bytes);
  return read_text_start(lines);
}

Trace text_decode(std::string_view bytes) {
  Lines lines(bytes);
  const FileStart start = read_text_start(lines);
  Trace t;
  t.header = start.header;
  const Problem p = trace_problem(t.header);
  Fields(lines.next("\"events\""), lines).expect("events");
  std::string_view line;
  for (;;) {
    line = lines.next("an event line or \"stats N\"");
    if (line.substr(0, 6) == "stats ") break;
    Fields f(line, lines);
    t.events.push_back(get_event(f, start.version));
    check_event(t.events.back(), t.events.size() - 1, start.version);
  }
  Fields sf(line, lines);
  sf.expect("stats");
  const auto blocks = sf.integer<std::uint64_t>("count");
  sf.end();
  if (blocks > std::uint64_t(p.tiling.t_r()))
    sf.fail("count", std::to_string(blocks), "at most T_r = " + std::to_string(p.tiling.t_r()) + " blocks");
  for (std::uint64_t b = 0; b < blocks; ++b) {
    Fields f(lines.next("\"block I N\""), lines);
    f.expect("block");
    BlockStats bs;
    bs.i = f.integer<std::int64_t>("i");
    const auto snaps = f.integer<std::uint64_t>("snapshots");
    f.end();
    if (bs.i < 0 || bs.i >= p.tiling.t_r()) f.fail("i", std::to_string(bs.i), "a Q block from 0 to T_r - 1");
    const auto rows = std::uint64_t(p.tiling.rows(bs.i));
    for (std::uint64_t k = 0; k < snaps; ++k) {
      Fields sn(lines.next("\"snap STEP J ROWS\""), lines);
      sn.expect("snap");
      StatSnapshot s;
      s.step = sn.integer<std::uint32_t>("step");
      s.j = sn.integer<std::int64_t>("j");
      const auto n = sn.integer<std::uint64_t>("rows");
      sn.end();
      if (n != rows) sn.fail("rows", std::to_string(n), "rows(i) = " + std::to_string(rows));
      s.m = get_values(lines, 'm', rows);
      s.l = get_values(lines, 'l', rows);
      bs.snapshots.push_back(std::move(s));
    }
    t.stats.push_back(std::move(bs));
  }
  Fields(lines.next("\"end\""), lines).expect("end");
  if (!lines.at_end())
    throw ConfigError("trace text line " + std::to_string(lines.number() + 1), "more text after \"end\"",
                      "nothing after the end line");
  if (start.version == 1) launches_from_v1(t);
  check_trace(t);
  return t;
}

}  // namespace flashlab::trace_form
