// trace_io.hpp — trace files in two forms, both lossless (docs/events.md "Files"):
//   text:   one line per event, for people and small runs ("flashlab-trace text 1" first line);
//   binary: the 40-byte Event records as the kernels' device buffer holds them, little-endian,
//           behind a magic, a version and the header as JSON (for large runs).
// Readers check every byte they use: a malformed, truncated or hostile file throws ConfigError
// naming what is wrong and where; a reader never allocates more than the file's own size allows.
// Writers write to "<target>.tmp-<pid>" and rename it onto the target only when complete; the
// destination is checked first (trace/output_file.hpp: no device, FIFO or directory is replaced, a
// symbolic link to a regular file survives).
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/trace/trace.hpp"
#include "flashlab/trace/output_file.hpp"

namespace flashlab {

enum class TraceFormat : std::uint8_t { text = 0, binary = 1 };
std::string_view to_string(TraceFormat f);
/// "text" or "binary"; throws ConfigError("format", text, allowed).
TraceFormat parse_trace_format(std::string_view text);

/// Largest header (JSON) a reader accepts, bytes.
inline constexpr std::size_t kMaxTraceHeaderBytes = std::size_t(1) << 20;
/// Deepest nesting of JSON arrays and objects a header may have (the top-level object is level 1,
/// `config` level 2); anything deeper is refused while it is parsed.
inline constexpr int kMaxTraceHeaderDepth = 8;
/// Events a GPU recorder may write beyond the simulator's count of its config (its device buffer,
/// kernels/host/runner.cpp, holds that many more), so that a faulty kernel's trace still reads.
inline constexpr std::uint64_t kTraceEventSlack = 64;

/// One event as its text-form line, without the newline:
/// "launch block step op tensor i j rows cols bytes warp eq", e.g. "0 5 3 load K 5 1 64 64 16384 -1 -".
std::string event_line(const Event& e);

/// The whole file of `t` in form `f`.
std::string encode_trace(const Trace& t, TraceFormat f);
/// Parses a file of either form (told apart by its first bytes). Throws ConfigError.
Trace decode_trace(std::string_view bytes);

/// Reads and decodes `path`. Throws ConfigError (the path, what is wrong, where) for a file that
/// cannot be read, is not a regular file (a device, FIFO or directory is refused before a byte is
/// read), is larger than max_trace_file_bytes of its own header (checked after the header is read,
/// before the rest), or is not a valid trace.
Trace read_trace(const std::string& path);
/// Writes `t` to `path` through a temporary file renamed when complete. Throws ConfigError
/// ("output") for a destination output_path() refuses or a temporary file that cannot be created,
/// std::runtime_error when a write or the rename fails (message names the path and errno's text).
void write_trace(const std::string& path, const Trace& t, TraceFormat f);

/// An upper bound on a trace file's size, from the schedule and the tile counts alone (no step is
/// walked, so it is cheap for any size). `events` is exact at block level when no tile is skipped
/// and at warp level when, in addition, every warp has rows (and, split-K, columns) in every tile;
/// a skipped tile is counted as a visited one. `event_bytes` is 40 (binary) or the longest text line.
/// `steps`: the steps of one (batch, head) over every launch, a bound on any event's step number (V1
/// and standard attention number their steps across the run, V2 restarts in each block).
struct TraceSizeBound {
  std::uint64_t events = 0, event_bytes = 0, bytes = 0;  // bytes: the whole file (saturates at 2^64 - 1)
  std::uint64_t steps = 0;
};
/// Bound of the file `TraceFileWriter(path, p, h, f)` writes, with statistics for `stats_blocks` Q blocks.
TraceSizeBound trace_size_bound(const Problem& p, const TraceHeader& h, TraceFormat f, std::size_t stats_blocks = 0);
/// The same for schedule `s` instead of p's own (a schedule written by hand: schedule_json.hpp).
TraceSizeBound trace_size_bound(const Problem& p, const Schedule& s, const TraceHeader& h, TraceFormat f,
                                std::size_t stats_blocks = 0);

/// The largest file in form f that a trace with header h can be, bytes: the size bound of its
/// config with statistics for all T_r Q blocks, plus (bound's events + kTraceEventSlack) records
/// of the widest kind any event can have (40 bytes binary; text: every field at its type's widest,
/// with "\r\n"). read_trace refuses a larger file. Throws ConfigError for an invalid config.
std::uint64_t max_trace_file_bytes(const TraceHeader& h, TraceFormat f);

/// Streams a trace to a file while the executor runs: an observer that encodes each step's events
/// at the header's level and writes them in 1 MiB chunks. finish() appends the statistics and
/// renames the temporary file to `path`; a writer destroyed before finish() removes it.
class TraceFileWriter : public StepObserver {
 public:
  /// Checks `path` and creates its temporary file: throws ConfigError("output") as write_trace.
  TraceFileWriter(std::string path, const Problem& p, const TraceHeader& h, TraceFormat f);
  ~TraceFileWriter() override;
  TraceFileWriter(const TraceFileWriter&) = delete;
  TraceFileWriter& operator=(const TraceFileWriter&) = delete;

  void on_step(const StepView& s) override;
  /// Appends events recorded elsewhere (a GPU recorder's buffer), in stream order.
  void add_events(std::span<const Event> events);
  /// Writes the statistics and the end marker, then renames to the final path.
  void finish(const std::vector<BlockStats>& stats = {});
  std::uint64_t events_written() const { return count_; }

 private:
  void flush();
  void write(std::string_view bytes);
  void check_open() const;

  OutputPath out_;
  TraceHeader header_;
  TraceFormat format_;
  std::FILE* file_ = nullptr;
  std::string buf_;
  StepEventSource source_;
  std::vector<Event> pending_;  // events not yet written, at most about 1 MiB
  std::uint64_t count_ = 0;
  long count_offset_ = 0;  // binary: where the event count is patched in
  bool done_ = false;
};

}  // namespace flashlab
