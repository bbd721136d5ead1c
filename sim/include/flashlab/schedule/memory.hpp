// memory.hpp — the memory levels: where a schedule keeps a tile (schedule.hpp Placement) and what
// the byte counters are indexed by (counters.hpp, [level][tensor][read|write]).
#pragma once

#include <cstdint>
#include <string_view>

namespace flashlab {

/// A level of the memory hierarchy, as the counters see it. Each level's "read" and "write" are
/// from the level's own side: a load of K_j reads HBM and writes SRAM.
///   hbm        global-memory requests, what the papers call HBM accesses (and what Nsight
///              Compute's l1tex__t_bytes_pipe_lsu_mem_global_op_{ld,st} count for V1 and V2)
///   sector     the same requests in whole 32-byte sectors, as the project's kernels move them
///              (sector_counter.hpp)
///   sram       shared memory: tile loads land there, stores leave from there
///   registers  the same for tiles a schedule keeps in registers (V2's O_i, S_ij/P_ij)
///   l2         the requests that reach the L2, in the L2 model's granularity (executor/l2_model.hpp)
///   dram       what the L2 model sends to DRAM: read misses and write-backs of dirty data
/// The last two are filled only when the L2 model ran (an L2Model attached to the walk).
enum class Memory : std::uint8_t { hbm = 0, sector = 1, sram = 2, registers = 3, l2 = 4, dram = 5 };
inline constexpr int kMemoryCount = 6;

std::string_view to_string(Memory m);  // "hbm", "sector", "sram", "registers", "l2", "dram"

}  // namespace flashlab
