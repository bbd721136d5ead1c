// trace_file.cpp — trace files on disk: whole-file reads, writes through a temporary file, and
// the streaming writer (see trace_io.hpp).
#include <cerrno>
#include <cstring>
#include <stdexcept>

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

Trace decode_trace(std::string_view bytes) {
  if (bytes.substr(0, trace_form::kBinaryMagic.size()) == trace_form::kBinaryMagic)
    return trace_form::binary_decode(bytes);
  if (bytes.substr(0, trace_form::kTextMagic.size()) == trace_form::kTextMagic) return trace_form::text_decode(bytes);
  std::string start;
  for (unsigned char c : bytes.substr(0, 8)) start += (c >= 0x20 && c < 0x7f) ? char(c) : '.';
  throw ConfigError("trace magic", "\"" + start + "\"",
                    "a flashlab trace: text starting \"flashlab-trace text\" or binary starting \"FLTRACE\"");
}

Trace read_trace(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw ConfigError("trace file", path, std::string("a readable file (") + std::strerror(errno) + ")");
  std::string bytes;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
  const bool failed = std::ferror(f);
  const int e = errno;
  std::fclose(f);
  if (failed) throw ConfigError("trace file", path, std::string("a readable file (") + std::strerror(e) + ")");
  try {
    return decode_trace(bytes);
  } catch (const ConfigError& err) {
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
    std::remove(out_.temp.c_str());
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
