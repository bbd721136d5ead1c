// help.cpp — see help.hpp.
#include "panels/help.hpp"

#include <imgui.h>

#include "flashlab/config/field_docs.hpp"

namespace flashlab::viz {
namespace {

std::string shown;  // last_tooltip(); the panels draw on one thread

void tooltip(const char* text) {
  shown = text;
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

std::string field_tip(std::string_view flag, std::string_view panel_text) {
  const FieldDoc& doc = field_doc(flag);
  std::string tip = doc.flag + ": " + field_help(doc);
  if (!panel_text.empty()) tip += "\n" + std::string(panel_text);
  return tip;
}

const std::string& last_tooltip() { return shown; }

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  item_help(text);
}

}  // namespace flashlab::viz
