// trace_io.cpp — trace files on disk: whole-file reads, writes through a temporary file, and
// the streaming writer (see trace_io.hpp).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_kind.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "flashlab/trace/output_file.hpp"
#include "forms.hpp"

namespace flashlab {
namespace {

constexpr std::size_t kChunk = std::size_t(1) << 20;

[[noreturn]] void fs_error(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

std::string_view to_string(TraceFormat f) { return f == TraceFormat::text ? "text" : "binary"; }

TraceFormat parse_trace_format(std::string_view t) {
  if (t == "text") return TraceFormat::text;
  if (t == "binary") return TraceFormat::binary;
  throw ConfigError("format", std::string(t), "one of text, binary");
}

std::string encode_trace(const Trace& t, TraceFormat f) {
  std::string out;
  if (f == TraceFormat::text) {
    trace_form::text_begin(out, t.header);
    trace_form::text_events(out, t.events);
    trace_form::text_end(out, t.stats);
  } else {
    trace_form::binary_begin(out, t.header, t.events.size());
    trace_form::binary_events(out, t.events);
    trace_form::binary_end(out, t.stats);
  }
  return out;
}

namespace trace_form {

TraceFormat form_of(std::string_view bytes) {
  if (bytes.substr(0, kBinaryMagic.size()) == kBinaryMagic) return TraceFormat::binary;
  if (bytes.substr(0, kTextMagic.size()) == kTextMagic) return TraceFormat::text;
  std::string start;
  for (unsigned char c : bytes.substr(0, 8)) start += (c >= 0x20 && c < 0x7f) ? char(c) : '.';
  throw ConfigError("trace magic", "\"" + start + "\"",
                    "a flashlab trace: text starting \"flashlab-trace text\" or binary starting \"FLTRACE\"");
}

FileStart read_start(std::string_view bytes) {
  return form_of(bytes) == TraceFormat::binary ? binary_start(bytes) : text_start(bytes);
}

}  // namespace trace_form

Trace decode_trace(std::string_view bytes) {
  return trace_form::form_of(bytes) == TraceFormat::binary ? trace_form::binary_decode(bytes)
                                                           : trace_form::text_decode(bytes);
}

std::uint64_t max_trace_file_bytes(const TraceHeader& h, TraceFormat f) {
  const Problem p = trace_problem(h);
  const TraceSizeBound b = trace_size_bound(p, h, f, std::size_t(p.tiling.t_r()));
  // The widest record any event can have: every field at the widest value of its type.
  std::uint64_t widest = sizeof(Event);
  if (f == TraceFormat::text) {
    Event e;
    e.launch = UINT16_MAX;
    e.block = e.step = e.rows = e.cols = UINT32_MAX;
    e.i = e.j = INT32_MIN;
    e.bytes = UINT64_MAX;
    e.warp = INT16_MIN;
    for (int k = 0; k < kOpCount; ++k)
      if (to_string(Op(k)).size() > to_string(e.op).size()) e.op = Op(k);
    for (int k = 0; k <= kTensorCount; ++k)
      if (to_string(Tensor(k)).size() > to_string(e.tensor).size()) e.tensor = Tensor(k);
    for (int k = 0; k < kEqCount; ++k)
      if (to_string(Eq(k)).size() > to_string(e.eq).size()) e.eq = Eq(k);
    widest = event_line(e).size() + 2;  // and "\r\n"
  }
  const auto add = [](std::uint64_t a, std::uint64_t c) { return c > UINT64_MAX - a ? UINT64_MAX : a + c; };
  const std::uint64_t events = add(b.events, kTraceEventSlack);
  return add(b.bytes, events > UINT64_MAX / widest ? UINT64_MAX : events * widest);
}

namespace {

// An open file, closed on every path.
struct File {
  std::FILE* f = nullptr;
  ~File() {
    if (f) std::fclose(f);
  }
};

[[noreturn]] void unreadable(const std::string& path, const std::string& why) {
  throw ConfigError("trace file", path, "a readable regular file (" + why + ")");
}

// Reads n bytes from the current position onto `out`.
void read_into(File& file, const std::string& path, std::string& out, std::size_t n) {
  const std::size_t at = out.size();
  out.resize(at + n);
  const std::size_t got = std::fread(out.data() + at, 1, n, file.f);
  if (std::ferror(file.f)) unreadable(path, std::strerror(errno));
  if (got != n) unreadable(path, "it became shorter while it was read");
}

}  // namespace

Trace read_trace(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below like any non-regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) unreadable(path, std::strerror(errno));
  struct stat st {};
  const bool stated = ::fstat(fd, &st) == 0;
  if (!stated || !S_ISREG(st.st_mode)) {
    const std::string why = stated ? "it is " + std::string(trace_form::file_kind(st.st_mode)) : std::strerror(errno);
    ::close(fd);
    unreadable(path, why);
  }
  File file{::fdopen(fd, "rb")};
  if (!file.f) {
    const int e = errno;
    ::close(fd);
    unreadable(path, std::strerror(e));
  }
  const auto size = std::uint64_t(st.st_size);
  try {
    // The start (magic, version, header) first: its config bounds how large the file can be.
    std::string bytes;
    read_into(file, path, bytes, std::size_t(std::min<std::uint64_t>(size, kMaxTraceHeaderBytes + 64)));
    const trace_form::FileStart start = trace_form::read_start(bytes);
    const std::uint64_t limit = max_trace_file_bytes(start.header, start.format);
    if (size > limit)
      throw ConfigError("trace file size", std::to_string(size) + " bytes",
                        "at most " + std::to_string(limit) + " bytes, the largest a " +
                            std::string(to_string(start.format)) + " trace of its config can be (docs/events.md \"Validity\")");
    if (size > std::uint64_t(SIZE_MAX)) unreadable(path, "it is larger than this machine can address");
    read_into(file, path, bytes, std::size_t(size) - bytes.size());
    if (std::fgetc(file.f) != EOF) unreadable(path, "it became longer while it was read");
    return decode_trace(bytes);
  } catch (const ConfigError& err) {
    if (err.field() == "trace file") throw;
    throw ConfigError(path + ": " + err.field(), err.value(), err.allowed());
  }
}

void write_trace(const std::string& path, const Trace& t, TraceFormat f) {
  write_output_file(path, encode_trace(t, f));
}

TraceFileWriter::TraceFileWriter(std::string path, const Problem& p, const TraceHeader& h, TraceFormat f)
    : out_(output_path(path)), header_(h), format_(f), source_(p, h.level) {
  file_ = open_output_temp(out_);
  pending_.reserve(kChunk / sizeof(Event) + 1024);
  if (format_ == TraceFormat::text) trace_form::text_begin(buf_, header_);
  else count_offset_ = long(trace_form::binary_begin(buf_, header_, 0));
}

TraceFileWriter::~TraceFileWriter() {
  if (!done_ && file_) {
    std::fclose(file_);
    remove_temp(out_);
  }
}

void TraceFileWriter::write(std::string_view bytes) { write_output_bytes(file_, bytes, out_); }

// Writes what is buffered: the text or bytes in buf_, then the pending events.
void TraceFileWriter::flush() {
  if (format_ == TraceFormat::text) trace_form::text_events(buf_, pending_);
  write(buf_);
  buf_.clear();
  if (format_ == TraceFormat::binary)
    write(std::string_view(reinterpret_cast<const char*>(pending_.data()), pending_.size() * sizeof(Event)));
  pending_.clear();
}

void TraceFileWriter::check_open() const {
  if (done_ || !file_) throw std::logic_error("TraceFileWriter: used after finish() or a failed write");
}

void TraceFileWriter::add_events(std::span<const Event> events) {
  check_open();
  pending_.insert(pending_.end(), events.begin(), events.end());
  count_ += events.size();
  if (pending_.size() * sizeof(Event) >= kChunk) flush();
}

void TraceFileWriter::on_step(const StepView& s) {
  check_open();
  const std::size_t before = pending_.size();
  source_.append(s, pending_);
  count_ += pending_.size() - before;
  if (pending_.size() * sizeof(Event) >= kChunk) flush();
}

void TraceFileWriter::finish(const std::vector<BlockStats>& stats) {
  check_open();
  Trace check;
  check.header = header_;
  check.stats = stats;
  trace_form::check_trace(check);
  flush();
  if (format_ == TraceFormat::text) trace_form::text_end(buf_, stats);
  else trace_form::binary_end(buf_, stats);
  write(buf_);
  buf_.clear();
  if (format_ == TraceFormat::binary) {
    if (std::fseek(file_, count_offset_, SEEK_SET) != 0) fs_error("cannot seek in", out_.temp);
    write(std::string_view(reinterpret_cast<const char*>(&count_), sizeof count_));
  }
  std::FILE* f = file_;
  file_ = nullptr;
  done_ = true;
  close_and_commit(f, out_);
}

}  // namespace flashlab
