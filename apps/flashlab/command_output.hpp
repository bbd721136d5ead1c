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

 private:
  OutputPath out_;    // out_.temp empty: standard output
  std::string flag_;  // the field of its ConfigErrors
};

}  // namespace flashlab::cli
