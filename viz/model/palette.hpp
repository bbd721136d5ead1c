// palette.hpp — the viewer's colours: tile classes, the heat map, warps, algorithms.
#pragma once

#include <cstdint>

#include "flashlab/config/config.hpp"
#include "flashlab/time/timeline.hpp"
#include "model/image.hpp"

namespace flashlab::viz::palette {

inline constexpr std::uint32_t full = rgba(66, 133, 244);       // every element visible
inline constexpr std::uint32_t partial = rgba(251, 188, 5);     // some elements visible
inline constexpr std::uint32_t skipped = rgba(52, 52, 60);      // no element visible, not computed
inline constexpr std::uint32_t computed_skipped = rgba(170, 62, 62);  // no element visible, computed anyway
inline constexpr std::uint32_t masked_element = rgba(40, 40, 46);     // tile panel: a masked (r, c)
inline constexpr std::uint32_t padding = rgba(20, 20, 24, 200);  // beyond N_q or N_k in a ragged tile
inline constexpr std::uint32_t resident = rgba(255, 255, 255);   // outline of tiles resident in SRAM
inline constexpr std::uint32_t selected = rgba(0, 230, 118);     // outline of the selected tile
inline constexpr std::uint32_t split = rgba(236, 64, 122);       // outline of a split's K/V blocks (split-KV)

/// Colour of a tile of class `cls`; `computed` is false for a tile the schedule skips.
std::uint32_t tile_colour(TileClass cls, bool computed);

/// Heat-map colour of t in [0, 1] (a viridis-like ramp, dark purple to yellow).
std::uint32_t heat(double t);

/// One colour per warp, cycling through 8 hues.
std::uint32_t warp_colour(int w);

/// Lines of the HBM plot: standard, V1, V2.
std::uint32_t algo_colour(Algo a);

/// The timeline's intervals (flashlab/time/timeline.hpp Phase): work in blues (the GEMMs), amber
/// (softmax), greens (the loads), purple (O's store), grey (a V1/V2 step); the waits, the bubbles,
/// each cause its own warm colour (full: red, empty: orange, named barrier: pink, wgmma: olive).
std::uint32_t phase_colour(Phase ph);
/// Whether `ph` is a wait (a bubble of its agent's stream).
bool is_wait(Phase ph);
/// The ring's row: stages holding data.
inline constexpr std::uint32_t ring_full = rgba(141, 110, 99);
/// The playback's current tile, and the selected tile, on the timeline: outlines.
inline constexpr std::uint32_t timeline_cursor = rgba(255, 255, 255);

}  // namespace flashlab::viz::palette
