// help.hpp — hover help (the ImGui demo's HelpMarker habit): every control explains its concept
// in one sentence with the paper's terms.
#pragma once

namespace flashlab::viz {

/// Shows `text` as a wrapped tooltip while the last item is hovered.
void item_help(const char* text);

/// A greyed "(?)" on the same line whose tooltip is `text`.
void help_marker(const char* text);

}  // namespace flashlab::viz
