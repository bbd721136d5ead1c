// compiled_registers.hpp — the registers per thread that ptxas gave each compiled kernel instance of
// kernels/ (the flashlab-gpu build that was timed for tests/data/gpu_time/h200.json), so that the
// occupancy of a launch this project's kernels run comes from the machine code rather than from
// the accumulator rule (occupancy.hpp), which stays for schedules no kernel runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "flashlab/config/config.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// The kernel of kernels/ that runs launch l of p's schedule ("fl_v2_forward", ...; the dispatch
/// of kernels/host/runner.cpp: split-Q warps with the Q outer order run V2's kernel, or its variant
/// kernel for --grid head or --rescale step; every other forward combination V1's row-update
/// kernel), or "" when none does (--kernel fa2, PyTorch's; standard attention's softmax and the
/// backward's standard launches, which are not templated on a tile).
std::string_view compiled_kernel(const Problem& p, const Launch& l);

/// Its registers per thread (cuobjdump --dump-resource-usage; scripts/gpu/registers_table.py), or
/// nothing when no compiled instance matches (kernel, dtype, d, B_r, B_c, warps).
std::optional<std::int64_t> compiled_registers(const Problem& p, const Launch& l);

}  // namespace flashlab
