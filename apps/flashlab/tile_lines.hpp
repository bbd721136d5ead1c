// tile_lines.hpp — the tile each side-by-side report runs on and why: compare's algorithms, each
// with its tile (B_r x B_c x warps), grid and the kernel it stands for (reference_tile.hpp),
// explain's walk from V1 to V2, all of it on one tile, and its walk from V2 to V3, V2 on FA2's tile and
// V3 on FA3's.
#pragma once

#include <string>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/report/metrics.hpp"

namespace flashlab::cli {

/// "N_q = 8192, N_k = 8192, d = 128; mask causal-br; fp16; batch 1, heads 32; SRAM M = ...; GPU h200":
/// the problem, without a tile.
std::string problem_line(const Problem& p);

/// One line per algorithm of cols (standard, V1, V2): its tile, T_r x T_c, grid, and the kernel it
/// stands for and why (`reference`: the tiles are the reference kernels', uses_reference_tiles),
/// or where the one tile comes from (tile_source of c). Each line ends in a newline.
std::string tile_lines(const std::vector<report::Figures>& cols, bool reference, const Config& c);

/// Where a tile not chosen per algorithm comes from, for the line above it: "as given" when --br, --bc
/// and --warps all were, else which were given and which are the defaults (default_blocks,
/// default_warps), or the V1 paper's rule for --br/--bc auto.
std::string tile_source(const Config& c);

/// explain's line under the problem: every step of the walk runs on one tile, B_r x B_c x warps of
/// p, and which kernel that is (`reference`: FA2's tile for d, V2's reference kernel, while V1's own
/// kernel runs reference_tile(v1, d)), or that it is the one given.
std::string walk_tile_line(const Problem& p, bool reference);

/// explain --algo v3's two lines under the problem: V2's tile (B_r x B_c x warps of v2) and V3's
/// (B_r x B_c of v3_off, the walk's first V3 step, with its warps and those of fa3, its last), and
/// whose they are (`reference`: FA2's tile for d, and FA3's for d and the mask, hopper/tile_size.h),
/// or that the tile is the one given. Ends in a newline.
std::string hopper_walk_tile_lines(const Problem& v2, const Problem& v3_off, const Problem& fa3, bool reference);

}  // namespace flashlab::cli
