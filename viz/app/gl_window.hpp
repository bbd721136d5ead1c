// gl_window.hpp — the OpenGL side of the app: textures for the panels' pictures, and reading the
// back buffer into a PNG or JPEG file.
#pragma once

#include <string>
#include <vector>

#include "options.hpp"
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

/// Reads the back buffer (width x height, before the swap), encodes it (stb: PNG, or JPEG at
/// quality 95) and writes it to `path` whole or not at all (write_output_file of
/// flashlab/trace/output_file.hpp: every write, the flush and the close checked, then renamed).
/// Returns "" or what went wrong ("cannot write <path>: No space left on device").
std::string write_back_buffer(const std::string& path, ImageFormat format, int width, int height);

}  // namespace flashlab::viz
