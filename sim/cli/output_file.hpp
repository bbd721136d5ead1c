// output_file.hpp — an output written to a temporary file beside its destination and renamed
// into place only when complete, so that no partial file is ever left under the final name
// (destination checks: flashlab/trace/output_file.hpp).
#pragma once

#include <fstream>
#include <ostream>
#include <string>

#include "flashlab/trace/output_file.hpp"

namespace flashlab::cli {

class OutputFile {
 public:
  /// `path` "-" or "" writes to stdout. Otherwise checks `path` (output_path()) and opens its
  /// temporary file; throws ConfigError (field "output") for a destination that is not a regular
  /// file or a link to one, or a temporary file that cannot be created.
  explicit OutputFile(const std::string& path);
  /// Removes the temporary file unless commit() succeeded.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  /// Flushes, closes and renames the temporary file onto the target (stdout: flushes and checks
  /// it, standard_output.hpp); throws OutputFailed (exit 4) on a write, close or rename failure
  /// (the temporary file is removed).
  void commit();

 private:
  OutputPath out_;  // out_.temp empty: stdout
  std::ofstream file_;
  bool committed_ = false;
};

}  // namespace flashlab::cli
