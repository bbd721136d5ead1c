// report.hpp — how the commands print numbers: exact integers with digit groups, human units,
// the one-line resolved configuration, and the JSON objects of a Problem and its Counters.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"

namespace flashlab::cli {

/// 2162688 -> "2,162,688".
std::string group_digits(std::uint64_t v);
/// Bytes in binary units: 8650752 -> "8.25 MiB" (below 1 KiB: "512 B").
std::string human_bytes(double bytes);
/// Counts in decimal units: 268435456 -> "268.4 M" (below 1000: the integer).
std::string human_count(double v);
/// "8,650,752 B (8.25 MiB)".
std::string bytes_both(std::uint64_t bytes);
/// a / b as "3.97x" (no decimals from 100x, two significant digits below 0.01x); "-" when b is 0.
std::string ratio(double a, double b);

/// The algorithm-independent part of a configuration in one line: sizes, B_r x B_c tiles and
/// T_r x T_c, mask, dtype, batch, heads, SRAM capacity M and GPU.
std::string shape_line(const Problem& p);
/// "<algo>: <shape_line>; block skip on|off".
std::string config_line(const Problem& p);

/// The resolved configuration: algo, n_q, n_k, d, b_r, b_c, t_r, t_c, batch, heads, dtype,
/// e_in (bytes), mask, block_skip, scale, warps, split, sram_capacity_bytes, gpu.
nlohmann::json problem_json(const Problem& p);

/// Counters as nested objects, so that dotted paths resolve: hbm.read_bytes.<T> and
/// hbm.write_bytes.<T> for T in Q K V O l m L S P (bytes, 0 where none), hbm.total_read_bytes,
/// hbm.total_write_bytes, hbm.total_bytes, tiles.{total,visited,full,partial,skipped},
/// flops.matmul, ops.{exp,max,add,sub,mul,div,log}, sram.{peak_bytes,capacity_bytes},
/// grid.{blocks,blocks_per_sm,waves,sms} (all launches: blocks and waves summed, the fewest
/// blocks per SM), launches[] (per launch: name, grid, read_bytes, write_bytes at the hbm level,
/// sram_peak_bytes, blocks_per_sm, waves), memory.<level> for the levels other than hbm (sector
/// when counted, sram, registers; each shaped like hbm), steps. All integers exact.
nlohmann::json counters_json(const Counters& k, const Problem& p);

}  // namespace flashlab::cli
