// png_output.hpp — a picture option's PNG file (`count --map FILE.png`, `sweep --plot FILE.png`):
// checked and opened before any work, encoded by stb_image_write, written through OutputFile (a
// temporary file beside the destination, flushed, closed and renamed only when complete).
#pragma once

#include <memory>
#include <string>

#include "model/image.hpp"
#include "output_file.hpp"

namespace flashlab::cli {

class PngOutput {
 public:
  /// `option` names the flag in errors ("map", "plot"). Throws ConfigError(option, path,
  /// "a file name ending in .png") for another name, and ConfigError(option, path, <why>) for a
  /// destination OutputFile refuses (a directory, device, FIFO, a missing directory...); throws
  /// std::runtime_error naming the missing package when this build cannot write PNGs (no stb).
  PngOutput(std::string option, const std::string& path);
  ~PngOutput();
  PngOutput(const PngOutput&) = delete;
  PngOutput& operator=(const PngOutput&) = delete;

  /// Encodes `img` (RGBA, top row first; width and height >= 1) and commits the file. Throws
  /// std::runtime_error when encoding or writing fails (no file is left under the name).
  void write(const viz::Image& img);
  const std::string& path() const { return path_; }

 private:
  std::string option_, path_;
  std::unique_ptr<OutputFile> file_;
};

}  // namespace flashlab::cli
