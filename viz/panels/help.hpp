// help.hpp — hover help (the ImGui demo's HelpMarker habit): every control explains its concept
// in one sentence with the paper's terms.
#pragma once

#include <string>
#include <string_view>

namespace flashlab::viz {

/// Shows `text` as a wrapped tooltip while the last item is hovered.
void item_help(const char* text);

/// The tooltip of a configuration control: its field's documentation (config/field_docs.hpp
/// field_help, the text of `flashlab --help` for `flag`), then on a new line `panel_text`, what
/// this control adds (omitted when empty). Throws std::out_of_range for a flag with no entry.
std::string field_tip(std::string_view flag, std::string_view panel_text = {});

/// The text of the tooltip drawn last ("" before any): ImGui logs no tooltip window, so tests
/// read what a hovered control explains here.
const std::string& last_tooltip();

/// A greyed "(?)" on the same line whose tooltip is `text`.
void help_marker(const char* text);

}  // namespace flashlab::viz
