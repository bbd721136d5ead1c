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

// The destination's OutputFile, checked; its errors name the flag.
OutputFile checked_png(const std::string& option, const std::string& path) {
  if (!ends_with_png(path)) throw ConfigError(option, path.empty() ? "\"\"" : path, "a file name ending in .png");
  return OutputFile(path, option);
}

// stbi_write_png_to_func's sink: appends the encoded bytes to a string.
void append(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), std::size_t(size));
}

}  // namespace

PngOutput::PngOutput(std::string option, const std::string& path)
    : option_(std::move(option)), file_(checked_png(option_, path)) {}

void PngOutput::write(const viz::Image& img) const {
  if (img.width < 1 || img.height < 1 || img.pixels.size() != std::size_t(img.width) * std::size_t(img.height))
    throw std::runtime_error("--" + option_ + ": no picture to write to " + path());
  // Image's pixels are bytes r, g, b, a in memory order: 4 components, rows top first.
  std::string png;
  if (!stbi_write_png_to_func(append, &png, img.width, img.height, 4, img.pixels.data(), img.width * 4))
    throw std::runtime_error("--" + option_ + ": encoding the PNG for " + path() + " failed");
  file_.write(png);  // ConfigError named option_ where the directory changed since the check
}

}  // namespace flashlab::cli
