// headless.hpp — Dear ImGui without a window: a context with a display size and a built font
// atlas, frames run by hand, and a texture sink that keeps every uploaded picture.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <imgui.h>
#include <imgui_internal.h>

#include "panels/texture.hpp"

namespace flashlab::viz::test {

class RecordingTextures : public TextureSink {
 public:
  ImTextureID upload(const Image& img, ImTextureID id) override {
    if (id == nullptr) id = reinterpret_cast<ImTextureID>(std::uintptr_t(++last_));
    images[id] = img;
    ++uploads;
    return id;
  }
  std::map<ImTextureID, Image> images;
  int uploads = 0;

 private:
  std::uintptr_t last_ = 100;
};

class Headless {
 public:
  explicit Headless(ImVec2 size = {1280, 720}) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = size;
    io.IniFilename = nullptr;
    io.DeltaTime = 1.0f / 60;
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
    io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(std::uintptr_t(1)));
  }
  ~Headless() { ImGui::DestroyContext(); }
  Headless(const Headless&) = delete;
  Headless& operator=(const Headless&) = delete;

  template <class Draw>
  void frame(Draw&& draw) {
    ImGui::NewFrame();
    draw();
    ImGui::Render();
  }

  /// Runs a frame with `draw` inside window `name` of `size` at the origin and returns the text it
  /// rendered (ImGui's logging to a buffer). A tooltip's End() ends the log and empties it: a frame
  /// that draws a tooltip returns "" (panels/help.hpp last_tooltip() holds the tooltip's text).
  template <class Draw>
  std::string text_of_window(const char* name, ImVec2 size, Draw&& draw) {
    ImGui::NewFrame();
    ImGui::SetNextWindowPos({0, 0});
    ImGui::SetNextWindowSize(size);
    ImGui::Begin(name);
    ImGui::LogToBuffer();
    draw();
    std::string text = ImGui::GetCurrentContext()->LogBuffer.c_str();
    ImGui::LogFinish();
    ImGui::End();
    ImGui::Render();
    return text;
  }
};

/// Whether the last rendered frame has a draw command with texture `id`.
inline bool drawn(ImTextureID id) {
  const ImDrawData* dd = ImGui::GetDrawData();
  for (int n = 0; dd && n < dd->CmdListsCount; ++n)
    for (const ImDrawCmd& c : dd->CmdLists[n]->CmdBuffer)
      if (c.TextureId == id) return true;
  return false;
}

}  // namespace flashlab::viz::test
