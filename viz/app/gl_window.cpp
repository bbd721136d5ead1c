// gl_window.cpp — see gl_window.hpp.
#include "gl_window.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <GL/gl.h>
#include <stb_image_write.h>
#include <unistd.h>

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

std::string write_back_buffer_png(const std::string& path, int width, int height) {
  std::vector<unsigned char> rgb(std::size_t(width) * std::size_t(height) * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, rgb.data());
  if (const GLenum e = glGetError(); e != GL_NO_ERROR) return "glReadPixels failed (GL error " + std::to_string(e) + ")";
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  stbi_flip_vertically_on_write(1);  // OpenGL's first row is the bottom one
  if (!stbi_write_png(tmp.c_str(), width, height, 3, rgb.data(), width * 3)) {
    std::remove(tmp.c_str());
    return "cannot write " + tmp;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return "cannot rename " + tmp + " to " + path + ": " + why;
  }
  return "";
}

}  // namespace flashlab::viz
