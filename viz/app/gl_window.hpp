// gl_window.hpp — the OpenGL side of the app: textures for the panels' pictures, and reading the
// back buffer into a PNG.
#pragma once

#include <string>
#include <vector>

#include "panels/texture.hpp"

namespace flashlab::viz {

/// Uploads pictures with glTexImage2D (RGBA8, nearest filtering: a cell stays a crisp square).
class GlTextures : public TextureSink {
 public:
  GlTextures() = default;
  GlTextures(const GlTextures&) = delete;
  GlTextures& operator=(const GlTextures&) = delete;
  ~GlTextures() override;
  ImTextureID upload(const Image& img, ImTextureID id) override;

 private:
  std::vector<unsigned> names_;
};

/// Reads the back buffer (width x height, before the swap) and writes it to `path` as a PNG
/// through "<path>.tmp-<pid>", renamed when complete. Returns "" or what went wrong.
std::string write_back_buffer_png(const std::string& path, int width, int height);

}  // namespace flashlab::viz
