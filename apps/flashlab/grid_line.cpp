// grid_line.cpp — the grid line of `count`, and why a block does not fit on an SM (grid_line.hpp).
#include "grid_line.hpp"
#include "flashlab/report/format.hpp"

#include <fmt/format.h>

#include "report.hpp"

namespace flashlab::cli {

using report::bytes_both;
using report::group_digits;
using report::human_bytes;
using report::human_count;


std::string grid_line(const Problem& p, const Counters& k) {
  // several launches: their thread blocks and waves add up, the blocks per SM are the fewest of any
  const bool several = k.launches.size() > 1;
  const std::string blocks =
      fmt::format("Grid: {} thread block{}{}", group_digits(std::uint64_t(k.grid_blocks)), k.grid_blocks == 1 ? "" : "s",
                  several ? fmt::format(" in {} launches (each below)", k.launches.size()) : "");
  if (fits_on_sm(k))
    return fmt::format("{}; {}{} block{} per SM on {} ({} SMs) -> {} wave{}{}", blocks, several ? "at least " : "",
                       k.blocks_per_sm, k.blocks_per_sm == 1 ? "" : "s", p.gpu.name, p.gpu.sms, k.waves,
                       k.waves == 1 ? "" : "s", several ? " in all" : "");
  // Resident blocks per SM = min(max blocks, max warps / warps, shared memory / SRAM peak)
  // (executor.cpp): 0 only through the warps or the shared memory.
  const std::string why =
      k.sram_peak_bytes > p.gpu.smem_per_sm
          ? fmt::format("its SRAM peak {} is over the {} of shared memory per SM",
                        bytes_both(std::uint64_t(k.sram_peak_bytes)), bytes_both(std::uint64_t(p.gpu.smem_per_sm)))
          : fmt::format("its {} warps are over the {} warps per SM", p.warps, p.gpu.max_warps_per_sm);
  return fmt::format("{}; a block does not fit on an SM of {}: {} -> no wave can run (lower --sram, --br or --bc)",
                     blocks, p.gpu.name, why);
}

}  // namespace flashlab::cli
