// report.hpp — what the commands print about a configuration besides the metrics: the one-line
// resolved configuration, and the JSON object of one configuration's figures. Numbers are
// formatted by flashlab/report/format.hpp, metrics come from flashlab/report/metrics.hpp.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/config/config.hpp"
#include "flashlab/report/metrics.hpp"

namespace flashlab::cli {

/// The algorithm-independent part of a configuration in one line: sizes, B_r x B_c tiles and
/// T_r x T_c, mask, dtype, batch, heads, SRAM capacity M and GPU.
std::string shape_line(const Problem& p);
/// "<algo>: <shape_line>; block skip on|off".
std::string config_line(const Problem& p);

/// One configuration's figures as `count --json` prints them: every metric of the catalogue at its
/// JSON path (hbm.read_bytes.<T>, hbm.total_bytes, tiles.*, flops.matmul, ops.*, sram.*, grid.*,
/// memory.<level>.*, steps, derived.*, warps.*), "launches": one object per launch of the
/// schedule (name, grid, read_bytes and write_bytes at the hbm level, sram_peak_bytes,
/// blocks_per_sm, waves), and "config": config_json(p, model).
nlohmann::json figures_json(const report::Figures& f, const std::string& model);

}  // namespace flashlab::cli
