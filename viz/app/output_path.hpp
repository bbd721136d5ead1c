// output_path.hpp — checking an output file named on the command line before any work is done, so
// that a run never renders its frames only to fail at the end.
#pragma once

#include <string>

namespace flashlab::viz {

/// Where the output `path` (given as flag `field`, e.g. "screenshot") will be written: `path`
/// itself, or, when `path` is a symbolic link to a regular file, that file (written through, so
/// the link stays a link). The file is later written to "<target>.tmp-<pid>" and renamed over
/// the target, so the target's directory must exist and be writable.
/// Throws ConfigError(field, path, "a file path that can be created") when the directory does not
/// exist, is not a directory or is not writable, or when the path is a dangling link; and
/// ConfigError(field, path, "a file path that can be created, not a directory, FIFO, socket or
/// device") when something other than a regular file is already there (it is never replaced).
std::string output_target(const std::string& field, const std::string& path);

}  // namespace flashlab::viz
