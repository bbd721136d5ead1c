// forms.hpp — the pieces the two trace file forms share (internal to sim/src/trace).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/trace/trace.hpp"
#include "flashlab/trace/trace_io.hpp"

namespace flashlab::trace_form {

/// The oldest format version this build reads (docs/events.md "Versions"); it writes kTraceVersion.
inline constexpr std::uint32_t kOldestTraceVersion = 1;
/// True for a version this build reads: kOldestTraceVersion to kTraceVersion.
constexpr bool readable_version(std::uint32_t v) { return v >= kOldestTraceVersion && v <= kTraceVersion; }
/// What a reader says it accepts: "version 1, 2 or 3 (this build writes 3)".
std::string readable_versions();

/// A file's form, told apart by its first bytes. Throws ConfigError("trace magic", ...) for neither.
TraceFormat form_of(std::string_view bytes);
/// The start of a file of either form: its version and header, read from its first bytes (the
/// magic, the version and the header: at most kMaxTraceHeaderBytes + 64 bytes are needed).
/// Throws ConfigError as decode_trace does.
struct FileStart {
  TraceFormat format = TraceFormat::text;
  std::uint32_t version = 0;
  TraceHeader header;
};
FileStart read_start(std::string_view bytes);

/// The header as one line of JSON, and back. parse_header checks every field strictly: unknown
/// or missing keys, wrong types and bad values throw ConfigError("trace header ...", ...).
std::string header_json(const TraceHeader& h);
TraceHeader parse_header(std::string_view json);

/// Throws ConfigError unless e's enums are in the range of its format version (versions 1 and 2:
/// no backward tensor, atomic op or backward equation), its pad byte is 0 and warp >= -1; in a
/// version-1 file, whose record had three pad bytes where `launch` is now, launch must be 0 too.
/// A binary reader maps versions 1 and 2's tensor byte 9 (none) to Tensor::none first.
void check_event(const Event& e, std::uint64_t index, std::uint32_t version);
/// Sets the launch of every event of a version-1 trace, which does not record it: standard
/// attention's step k is launch k (standard_launch_of_step), every other algorithm has launch 0.
void launches_from_v1(Trace& t);
/// Checks what the header promises: a block-level trace has only warp = -1 events; statistics
/// have i in [0, T_r) increasing, rows(i) values per snapshot, and are present exactly when the
/// header names their inputs.
void check_trace(const Trace& t);

/// What decode_body reads after the header, in file order. Each form reads its own bytes and
/// names the place of an error in its own words ("trace text line 12 i", "trace binary statistics
/// block"); the order of the parts and the checks on them are decode_body's, for both forms.
class BodySource {
 public:
  enum class Field : std::uint8_t { stats_count, stats_block, snapshot_rows };
  virtual ~BodySource() = default;
  /// Reads the next event into e (its fields not yet checked); false when the events end.
  virtual bool next_event(Event& e) = 0;
  /// The number of Q blocks with statistics.
  virtual std::uint64_t stats_count() = 0;
  /// A statistics block: its Q block index i; `snapshots` receives its number of snapshots.
  virtual std::int64_t stats_block(std::uint64_t& snapshots) = 0;
  /// A snapshot's step and j into s; returns the number of rows it says it holds.
  virtual std::uint64_t snapshot(StatSnapshot& s) = 0;
  /// The snapshot's m and l values, `rows` of each (rows already checked against rows(i)).
  virtual void values(StatSnapshot& s, std::uint64_t rows) = 0;
  /// What ends the file, and that nothing follows it.
  virtual void end() = 0;
  /// Throws ConfigError naming `f` in this form's words, at the place last read.
  [[noreturn]] virtual void fail(Field f, const std::string& value, const std::string& allowed) const = 0;
};
/// The events and the statistics after the header: every event checked (check_event), at most
/// T_r statistics blocks, each i in [0, T_r), rows(i) values per snapshot, a version-1 trace's
/// launches derived (launches_from_v1), then check_trace. Throws ConfigError.
Trace decode_body(const FileStart& start, BodySource& src);

/// How either form reads a file, given its cursor over the bytes (binary Reader, text Lines), the
/// function that reads the start (magic, version, header) and the BodySource that reads the rest
/// from where the start left the cursor: the start alone, or the start then decode_body.
template <class Cursor, class Body>
struct FormReader {
  FileStart (*read_start)(Cursor&);

  FileStart start(std::string_view bytes) const {
    Cursor c(bytes);
    return read_start(c);
  }
  Trace decode(std::string_view bytes) const {
    Cursor c(bytes);
    const FileStart start = read_start(c);
    Body body(c, start.version);
    return decode_body(start, body);
  }
};

// Text form: "flashlab-trace text 2", "header {json}", "events", one line per event, "stats n",
// the statistics, "end".
void text_begin(std::string& out, const TraceHeader& h);
void text_events(std::string& out, std::span<const Event> events);
void text_end(std::string& out, const std::vector<BlockStats>& stats);
Trace text_decode(std::string_view bytes);
FileStart text_start(std::string_view bytes);
inline constexpr std::string_view kTextMagic = "flashlab-trace text ";

// Binary form: magic, u32 version, u32 header bytes, header, u64 event count, the records,
// u32 statistics blocks, the statistics, end magic. All little-endian.
inline constexpr std::string_view kBinaryMagic{"FLTRACE\x1a", 8};
inline constexpr std::string_view kBinaryEnd{"FLTREND\x1a", 8};
/// Appends magic, version, header and the event count; returns the count's offset in `out`.
std::size_t binary_begin(std::string& out, const TraceHeader& h, std::uint64_t count);
void binary_events(std::string& out, std::span<const Event> events);
void binary_end(std::string& out, const std::vector<BlockStats>& stats);
Trace binary_decode(std::string_view bytes);
FileStart binary_start(std::string_view bytes);

}  // namespace flashlab::trace_form
