// temp_files.hpp — the output temporaries this process is writing ("<target>.tmp-<pid>",
// output_file.hpp), kept where a signal handler can reach them: SIGINT, SIGTERM or a file-size
// limit's SIGXFSZ in the middle of an output removes them, and nothing partial is left (issue 24:
// Ctrl-C during `trace -o` left files of up to 460 MB).
#pragma once

#include <string>

namespace flashlab {

/// Records `path`, a temporary about to be created. At most kMaxLiveTemps at once (more are not
/// tracked); paths longer than kMaxTempPath bytes are not tracked.
void track_temp(const std::string& path);
/// Forgets `path`: renamed into place or removed.
void forget_temp(const std::string& path);
/// Unlinks every tracked temporary. Async-signal-safe (unlink(2) only, no allocation or lock).
void remove_live_temps() noexcept;

inline constexpr int kMaxLiveTemps = 64;
inline constexpr int kMaxTempPath = 4096;

/// Handlers for SIGINT, SIGTERM, SIGHUP and SIGXFSZ, each unless it was inherited as ignored (a
/// background job's SIGINT, `trap '' XFSZ`): remove_live_temps(), one line on standard error
/// ("<program>: interrupted by SIGINT; partial output files removed"), then _exit(128 + signal
/// number) — 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP — or _exit(write_failed) for SIGXFSZ
/// (a file-size limit: an output could not be written). `program` must outlive the process.
void remove_temps_on_signals(const char* program, int write_failed);

}  // namespace flashlab
