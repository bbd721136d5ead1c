// texture.hpp — pictures go to the GPU through a TextureSink (OpenGL in the app, a recorder in the
// tests), and a TextureSlot rebuilds its picture only when what it shows changes.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <imgui.h>

#include "model/image.hpp"

namespace flashlab::viz {

class TextureSink {
 public:
  virtual ~TextureSink() = default;
  /// Uploads `img` into texture `id` (nullptr: a new texture) and returns the texture's id.
  virtual ImTextureID upload(const Image& img, ImTextureID id) = 0;
};

/// One texture and the key of the picture it holds.
class TextureSlot {
 public:
  using Key = std::vector<std::int64_t>;

  /// The texture for `key`: calls build() -> Image and uploads it when the key differs from the
  /// last one, else returns the texture as it is.
  template <class Build>
  ImTextureID get(TextureSink& sink, const Key& key, Build&& build) {
    if (id_ == nullptr || key != key_) {
      image_ = build();
      id_ = sink.upload(image_, id_);
      key_ = key;
      ++builds_;
    }
    return id_;
  }
  const Image& image() const { return image_; }
  /// How many times the picture was built (each is one walk of the grid).
  std::uint64_t builds() const { return builds_; }

 private:
  ImTextureID id_ = nullptr;
  Key key_;
  Image image_;
  std::uint64_t builds_ = 0;
};

}  // namespace flashlab::viz
