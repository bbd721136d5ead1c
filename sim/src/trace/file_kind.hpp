// file_kind.hpp — what a path that is not a regular file is, for the errors of the trace reader
// and of the output helper (internal to sim/src/trace).
#pragma once

#include <sys/stat.h>

namespace flashlab::trace_form {

/// "a directory", "a character device", "a block device", "a FIFO", "a socket", or "not a regular
/// file" for any other kind, from a stat() mode.
inline const char* file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace flashlab::trace_form
