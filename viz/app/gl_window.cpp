// gl_window.cpp — see gl_window.hpp.
#include "gl_window.hpp"

#include <cstdint>
#include <exception>

#include <GL/gl.h>
#include <stb_image_write.h>

#include "flashlab/trace/output_file.hpp"

namespace flashlab::viz {

GlTextures::~GlTextures() {
  if (!names_.empty()) glDeleteTextures(GLsizei(names_.size()), names_.data());
}

ImTextureID GlTextures::upload(const Image& img, ImTextureID id) {
  auto name = GLuint(reinterpret_cast<std::uintptr_t>(id));
  if (name == 0) {
    glGenTextures(1, &name);
    names_.push_back(name);
  }
  glBindTexture(GL_TEXTURE_2D, name);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  static const std::uint32_t kEmpty = 0;
  const bool empty = img.width == 0 || img.height == 0;
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, empty ? 1 : img.width, empty ? 1 : img.height, 0, GL_RGBA,
               GL_UNSIGNED_BYTE, empty ? &kEmpty : img.pixels.data());
  return reinterpret_cast<ImTextureID>(std::uintptr_t(name));
}

std::string write_back_buffer(const std::string& path, ImageFormat format, int width, int height) {
  std::vector<unsigned char> rgb(std::size_t(width) * std::size_t(height) * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, rgb.data());
  if (const GLenum e = glGetError(); e != GL_NO_ERROR) return "glReadPixels failed (GL error " + std::to_string(e) + ")";
  std::string bytes;  // the encoded file, written in one piece below
  const auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), std::size_t(size));
  };
  stbi_flip_vertically_on_write(1);  // OpenGL's first row is the bottom one
  const int ok = format == ImageFormat::png ? stbi_write_png_to_func(append, &bytes, width, height, 3, rgb.data(), width * 3)
                                            : stbi_write_jpg_to_func(append, &bytes, width, height, 3, rgb.data(), 95);
  if (!ok) return "cannot encode the screenshot for " + path;
  try {
    flashlab::write_output_file(path, bytes);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace flashlab::viz
