// png_output.cpp — see png_output.hpp. Built when stb is found (pictures_missing.cpp otherwise).
#include "png_output.hpp"

#include <stdexcept>

#include <stb_image_write.h>

#include "flashlab/contract/error.hpp"

namespace flashlab::cli {
namespace {

bool ends_with_png(const std::string& path) {
  if (path.size() < 5) return false;  // a name before ".png"
  std::string ext = path.substr(path.size() - 4);
  for (char& ch : ext) ch = char(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  return ext == ".png" && path[path.size() - 5] != '/';
}

// stbi_write_png_to_func's sink: appends the encoded bytes to the stream.
void append(void* context, void* data, int size) {
  static_cast<std::ostream*>(context)->write(static_cast<const char*>(data), size);
}

}  // namespace

PngOutput::PngOutput(std::string option, const std::string& path) : option_(std::move(option)), path_(path) {
  if (!ends_with_png(path)) throw ConfigError(option_, path.empty() ? "\"\"" : path, "a file name ending in .png");
  try {
    file_ = std::make_unique<OutputFile>(path);
  } catch (const ConfigError& e) {  // OutputFile names its field "output"; name the flag instead
    throw ConfigError(option_, e.value(), e.allowed());
  }
}

PngOutput::~PngOutput() = default;

void PngOutput::write(const viz::Image& img) {
  if (img.width < 1 || img.height < 1 || img.pixels.size() != std::size_t(img.width) * std::size_t(img.height))
    throw std::runtime_error("--" + option_ + ": no picture to write to " + path_);
  // Image's pixels are bytes r, g, b, a in memory order: 4 components, rows top first.
  if (!stbi_write_png_to_func(append, &file_->stream(), img.width, img.height, 4, img.pixels.data(), img.width * 4))
    throw std::runtime_error("--" + option_ + ": encoding the PNG for " + path_ + " failed");
  file_->commit();
}

}  // namespace flashlab::cli
