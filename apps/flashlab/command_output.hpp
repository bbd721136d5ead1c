// command_output.hpp — a command's output file (`sweep -o FILE`, `count --map FILE.png`, `sweep --plot
// FILE.png`): its destination checked before any work, its bytes written whole or not at all by the
// project's one output helper (flashlab/trace/output_file.hpp: a temporary file beside the
// destination, every write, the flush and the close checked, renamed into place when complete).
#pragma once

#include <string>
#include <string_view>

#include "flashlab/trace/output_file.hpp"

namespace flashlab::cli {

class OutputFile {
 public:
  /// `path` "-" or "" is standard output. Otherwise checks the destination (output_path) and that
  /// its temporary file can be created (check_creatable), creating no file; throws ConfigError
  /// (field `flag`: the command's flag without its dashes, "json" for `timeline --json FILE`) for a
  /// destination that is not a regular file or a link to one, or a directory where the file cannot
  /// be created.
  explicit OutputFile(const std::string& path, std::string flag = "output");

  /// Writes `bytes` as the whole file (open_output_temp, write_output_bytes, close_and_commit), or
  /// to standard output, flushed. Throws ConfigError (field `flag`) when the temporary file can
  /// no longer be created, std::runtime_error for a failed write, flush, close or rename ("cannot
  /// write <path>: No space left on device"); no file is then left under either name.
  void write(std::string_view bytes) const;

  /// The path as the user gave it ("-" for standard output).
  const std::string& path() const { return out_.path; }

  /// The flag it was given with, without its dashes ("json").
  const std::string& flag() const { return flag_; }

  /// Whether this and `other` write the same destination: both standard output, or one file (its
  /// directory's canonical path and the name, links followed as output_path follows them).
  bool same_destination(const OutputFile& other) const;

 private:
  OutputPath out_;    // out_.temp empty: standard output
  std::string flag_;  // the field of its ConfigErrors
};

/// Refuses two outputs of one command that write the same destination (`timeline --json x --csv x`:
/// the second would replace the first): ConfigError(field `b.flag()`, its path, "a destination other
/// than --<a.flag()>'s"). Call before any work.
void check_distinct(const OutputFile& a, const OutputFile& b);

}  // namespace flashlab::cli
