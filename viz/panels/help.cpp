// help.cpp — see help.hpp.
#include "panels/help.hpp"

#include <imgui.h>

namespace flashlab::viz {
namespace {

void tooltip(const char* text) {
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

}  // namespace

void item_help(const char* text) {
  if (ImGui::IsItemHovered()) tooltip(text);
}

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  item_help(text);
}

}  // namespace flashlab::viz
