// occupancy.cpp — resident blocks per SM (occupancy.hpp).
#include "flashlab/memory/occupancy.hpp"

#include <algorithm>

#include "flashlab/memory/compiled_registers.hpp"

namespace flashlab {
namespace {

constexpr std::int64_t kRegistersPerSm = 65536;
constexpr std::int64_t kRegisterBase = 40;         // addresses, indices, operand fragments
constexpr std::int64_t kMaxRegisters = 255;
constexpr std::int64_t kWarpRegisterGranule = 256;  // registers are allocated per warp in 256s
constexpr std::int64_t kReservedSmem = 1024;        // shared memory the driver keeps per block

bool any_eq(const Launch& l, Eq e) {
  auto in = [e](const std::vector<Action>& v) {
    return std::any_of(v.begin(), v.end(), [e](const Action& a) { return a.op == Op::compute && a.eq == e; });
  };
  if (in(l.body) || in(l.outer_begin) || in(l.outer_end)) return true;
  return std::any_of(l.prologue.begin(), l.prologue.end(), in);
}

}  // namespace

std::int64_t registers_per_thread(const Problem& p, const Launch& l) {
  const Tiling& t = p.tiling;
  const bool matmul = any_eq(l, Eq::scores) || any_eq(l, Eq::output_dense) || any_eq(l, Eq::output_v1) ||
                      any_eq(l, Eq::output_v2);
  std::int64_t acc = 0;  // fp32 accumulator elements per warp
  if (matmul) {
    const std::int64_t w = p.warps, br = std::min(t.b_r, t.n_q), bc = std::min(t.b_c, t.n_k);
    const bool tiles = !walked_loops(l).empty();
    const bool o_in_registers = placement_of(l, Tensor::O) == Memory::registers;
    if (tiles && p.split == WarpSplit::split_k)
      acc = br * ((bc + w - 1) / w) + br * t.d;
    else
      acc = (br + w - 1) / w * (bc + (o_in_registers ? t.d : 0));
  }
  const std::int64_t regs = (acc + 31) / 32 + kRegisterBase;
  return std::min(kMaxRegisters, (regs + 7) / 8 * 8);
}

bool row_launch(const Launch& l) {
  return std::any_of(l.loops.begin(), l.loops.end(), [](const Loop& x) { return x.thread_block && x.dim == Dim::q_row; });
}

std::int64_t row_tensors_loaded(const Launch& l) {
  std::int64_t n = 0;
  for (const std::vector<Action>& step : l.prologue)
    for (const Action& a : step)
      if (a.op == Op::load && a.region == Region::whole &&
          (a.tensor == Tensor::S || a.tensor == Tensor::P || a.tensor == Tensor::dP || a.tensor == Tensor::dS))
        ++n;
  return n;
}

int launch_warps(const Problem& p, const Launch& l) { return row_launch(l) ? kRowWarps : p.warps; }

Occupancy launch_occupancy(const Problem& p, const Launch& l) {
  const Tiling& t = p.tiling;
  if (row_launch(l)) {
    Problem row = p;
    row.warps = kRowWarps;
    return occupancy(row, l, row_tensors_loaded(l) * ((t.n_k + 7) / 8 * 8) * 4 + kRowWarps * 4);
  }
  return occupancy(p, l, sram_bytes(l, std::min(t.b_r, t.n_q), std::min(t.b_c, t.n_k), t.d, p.e_in));
}

Occupancy occupancy(const Problem& p, const Launch& l, std::int64_t sram_peak) {
  const GpuSpec& g = p.gpu;
  Occupancy o;
  o.smem_per_block = sram_peak + kReservedSmem;
  const std::optional<std::int64_t> compiled = compiled_registers(p, l);
  o.registers_per_thread = compiled ? *compiled : registers_per_thread(p, l);
  o.registers_compiled = compiled.has_value();
  const std::int64_t warp_regs = (o.registers_per_thread * 32 + kWarpRegisterGranule - 1) / kWarpRegisterGranule *
                                 kWarpRegisterGranule;
  struct Limit {
    std::int64_t n;
    std::string_view name;
  };
  const Limit limits[] = {
      {g.max_blocks_per_sm, "blocks"},
      {g.max_warps_per_sm / p.warps, "threads"},
      {kRegistersPerSm / (warp_regs * p.warps), "registers"},
      {g.smem_per_sm / o.smem_per_block, "shared memory"},
  };
  o.blocks_per_sm = limits[0].n;
  o.limit = limits[0].name;
  for (const Limit& x : limits)
    if (x.n < o.blocks_per_sm) {
      o.blocks_per_sm = x.n;
      o.limit = x.name;
    }
  o.blocks_per_sm = std::max<std::int64_t>(1, o.blocks_per_sm);
  o.slots = o.blocks_per_sm * g.sms;
  return o;
}

}  // namespace flashlab
