// output_file.hpp — output files written whole or not at all (STYLE: a temporary name renamed
// when complete), shared by the trace writers and the `flashlab` command's other outputs.
//
// The destination is checked before anything is written: an existing path that is not a regular
// file (a device such as /dev/null, a FIFO, a directory, a socket) is refused and left untouched;
// a symbolic link to a regular file is followed, so the new file replaces the link's target and
// the link survives.
#pragma once

#include <string>

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

}  // namespace flashlab
