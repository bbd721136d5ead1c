// output_file.hpp — output files written whole or not at all (STYLE: a temporary name renamed
// when complete), shared by the trace writers and the `flashlab` command's other outputs.
//
// The destination is checked before anything is written: an existing path that is not a regular
// file (a device such as /dev/null, a FIFO, a directory, a socket) is refused and left untouched;
// a symbolic link to a regular file is followed, so the new file replaces the link's target and
// the link survives.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flashlab/contract/error.hpp"

namespace flashlab {

/// Where an output goes. `path` as the user gave it (for messages); `target` the regular file
/// that is created or replaced (`path`, or the file a symbolic link at `path` resolves to);
/// `temp` "<target>.tmp-<pid>", beside the target, so that the final rename stays on one file system.
struct OutputPath {
  std::string path, target, temp;
};

/// Checks `path` and names its temporary file. Throws ConfigError("output", path,
/// "a regular file path (it is a character device)") — or block device, FIFO, directory, socket,
/// symbolic link to a missing file — when `path` exists and is not a regular file or a link to one.
OutputPath output_path(const std::string& path);

/// The error for a temporary file that cannot be created (errnum: errno of the failed open):
/// ConfigError("output", path, "a file path that can be created (<errno text>)").
ConfigError output_create_error(const OutputPath& out, int errnum);

/// Renames out.temp onto out.target. On failure removes out.temp and throws std::runtime_error
/// naming out.path and errno's text.
void commit_output(const OutputPath& out);

/// Checks, before any work, that out.temp can be created: creates it (exclusively) and removes it.
/// Throws output_create_error(out, errno) when it cannot (missing or unwritable directory...).
void check_creatable(const OutputPath& out);

/// Opens out.temp for writing (binary, truncated) and tracks it (temp_files.hpp: a signal removes
/// it until commit_output or remove_temp). Throws output_create_error(out, errno).
std::FILE* open_output_temp(const OutputPath& out);

/// Removes out.temp and stops tracking it.
void remove_temp(const OutputPath& out);

/// Writes `bytes` to `f` (open on out.temp). On a short write closes `f` (it becomes null), removes
/// out.temp and throws std::runtime_error("cannot write <out.path>: <errno text>").
void write_output_bytes(std::FILE*& f, std::string_view bytes, const OutputPath& out);

/// Flushes and closes `f` (open on out.temp), checking both; the complete temporary stays for
/// commit_output. On a failure removes out.temp and throws std::runtime_error("cannot write
/// <out.path>: <errno text>").
void close_output_temp(std::FILE* f, const OutputPath& out);

/// close_output_temp(f, out), then commit_output(out). On any failure removes out.temp, leaves the
/// target untouched and throws std::runtime_error ("cannot write <out.path>: <errno text>", or
/// commit_output's).
void close_and_commit(std::FILE* f, const OutputPath& out);

/// `bytes` to `path`, whole or not at all: write_output_files of the one file (output_path,
/// open_output_temp, write_output_bytes, close_output_temp, commit_output). Throws ConfigError for
/// a refused destination or a temporary file that cannot be created, std::runtime_error for a
/// failed write, flush, close or rename (a full file system: "cannot write <path>: No space left on
/// device"); no file is then left under either name.
void write_output_file(const std::string& path, std::string_view bytes);

/// A set of outputs, (path, bytes) each, written together: every file is written to its
/// temporary and closed first, and only then is each renamed into place. A refused destination,
/// or a failed create, write, flush or close of any of them, removes every temporary of the set and
/// throws as write_output_file does: no file of the set is created or replaced. (A rename that
/// fails after all were written leaves those renamed before it; commit_output's error names it.)
void write_output_files(const std::vector<std::pair<std::string, std::string_view>>& files);

}  // namespace flashlab
