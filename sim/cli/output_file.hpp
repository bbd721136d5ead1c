// output_file.hpp — an output written to a temporary file beside its destination and renamed
// into place only when complete, so that no partial file is ever left under the final name.
#pragma once

#include <fstream>
#include <ostream>
#include <string>

namespace flashlab::cli {

class OutputFile {
 public:
  /// `path` "-" or "" writes to stdout. Otherwise opens "<path>.tmp.<pid>"; throws ConfigError
  /// (field "output") when it cannot be created.
  explicit OutputFile(std::string path);
  /// Removes the temporary file unless commit() succeeded.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  /// Flushes, closes and renames the temporary file to `path`; throws std::runtime_error on a
  /// write or rename failure (the temporary file is removed).
  void commit();

 private:
  std::string path_, tmp_;
  std::ofstream file_;
  bool committed_ = false;
};

}  // namespace flashlab::cli
