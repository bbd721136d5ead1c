// png_output.hpp — a picture option's PNG file (`count --map FILE.png`, `sweep --plot FILE.png`):
// its destination checked before any work, the picture encoded by stb_image_write in memory, then
// written whole or not at all through OutputFile (command_output.hpp), as the other outputs are.
#pragma once

#include <string>

#include "model/image.hpp"
#include "command_output.hpp"

namespace flashlab::cli {

class PngOutput {
 public:
  /// `option` names the flag in errors ("map", "plot"). Throws ConfigError(option, path,
  /// "a file name ending in .png") for another name, and ConfigError(option, path, <why>) for a
  /// destination OutputFile refuses (a directory, device, FIFO, a missing or unwritable
  /// directory...); throws std::runtime_error naming the missing package when this build cannot
  /// write PNGs (no stb). Creates no file.
  PngOutput(std::string option, const std::string& path);

  /// Encodes `img` (RGBA, top row first; width and height >= 1) and writes the file whole. Throws
  /// std::runtime_error when encoding or writing fails ("cannot write <path>: No space left on
  /// device"); no file is then left under the name or its temporary name.
  void write(const viz::Image& img) const;
  const std::string& path() const { return file_.path(); }
  const OutputFile& file() const { return file_; }

 private:
  std::string option_;
  OutputFile file_;
};

}  // namespace flashlab::cli
