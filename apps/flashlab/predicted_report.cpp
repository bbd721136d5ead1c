// predicted_report.cpp — the L2/DRAM levels and the predicted time as text.
#include "predicted_report.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/report/report_json.hpp"  // fits_on_sm

#include <fmt/format.h>

#include "report.hpp"

namespace flashlab::cli {

using report::bytes_both;
using report::group_digits;
using report::human_bytes;
using report::human_count;


std::string seconds_text(double s) {
  return s >= 1 ? fmt::format("{:.3f} s", s) : s >= 1e-3 ? fmt::format("{:.3f} ms", s * 1e3)
                                                         : fmt::format("{:.1f} us", s * 1e6);
}

std::uint64_t dirty_at_end(const Counters& k) {
  std::uint64_t dirty = 0;
  for (const LaunchCounters& l : k.launches) dirty += total(l.l2_dirty_at_end, Dir::write);
  return dirty;
}

std::string predicted_text(const Problem& p, const Counters& k, const TimePrediction& t) {
  std::string s = fmt::format("\nRequests (hbm), L2 and DRAM (L2 model, {} L2), all {} (batch, head) pairs\n",
                              human_bytes(double(p.gpu.l2_bytes)), p.bh());
  s += fmt::format("  {:<6}{:>18}{:>18}{:>18}{:>18}{:>18}\n", "tensor", "requests read", "L2 read", "DRAM read",
                   "requests written", "DRAM written");
  auto row = [&](std::string_view name, double hr, double lr, double dr, double hw, double dw) {
    s += fmt::format("  {:<6}{:>18}{:>18}{:>18}{:>18}{:>18}\n", name, human_bytes(hr), human_bytes(lr), human_bytes(dr),
                     human_bytes(hw), human_bytes(dw));
  };
  for (int x = 0; x < kTensorCount; ++x) {
    const Tensor t = Tensor(x);
    const auto hr = k.bytes(Memory::hbm, t, Dir::read), hw = k.bytes(Memory::hbm, t, Dir::write);
    const auto lr = k.bytes(Memory::l2, t, Dir::read);
    const auto dr = k.bytes(Memory::dram, t, Dir::read), dw = k.bytes(Memory::dram, t, Dir::write);
    if (hr + hw + lr + dr + dw == 0) continue;
    row(to_string(t), double(hr), double(lr), double(dr), double(hw), double(dw));
  }
  row("total", double(k.cost.read_bytes()), double(total(k.levels[int(Memory::l2)], Dir::read)),
      double(t.dram_read_bytes), double(k.cost.write_bytes()), double(t.dram_write_bytes));
  const std::uint64_t dirty = dirty_at_end(k);
  s += fmt::format("  L2 requests: the loads the kernels issue (standard attention's kernels read K and V once per Q "
                   "block); DRAM written: during the launches, {} more still dirty in the L2 at their end\n",
                   human_bytes(double(dirty)));
  s += std::string("  ") + kPapersCountLine + "\n";
  if (!report::fits_on_sm(k))
    s += fmt::format("\nPredicted time on {}: none: a thread block does not fit on an SM, so no wave can run (Grid "
                     "above); the launches below are what one block per SM would take\n",
                     p.gpu.name);
  else
    s += fmt::format("\nPredicted time on {} ({} ceilings): {}  ({:.1f} TFLOP/s, {:.1f}% of the {} peak); bound: {}\n",
                     p.gpu.name, t.measured ? "measured" : "datasheet", seconds_text(t.time_s),
                     t.tflops, 100 * t.peak_fraction, t.wgmma ? "wgmma" : "mma.sync", to_string(t.bound));
  for (const LaunchTime& l : t.launches) {
    s += fmt::format("  {:<18} {:>10}  bound {:<7} grid {} in {} wave{} ({} blocks/SM, {}-limited, {} regs/thread; "
                     "{} sharing an SM), SMs busy {:.0f}%\n    registers {}, instruction issue {}\n",
                     l.name, seconds_text(l.time_s), to_string(l.bound), group_digits(std::uint64_t(l.grid)), l.waves,
                     l.waves == 1 ? "" : "s", l.occupancy.blocks_per_sm, l.occupancy.limit,
                     l.occupancy.registers_per_thread, l.sharing, 100 * l.sm_busy,
                     l.occupancy.registers_compiled ? "from the compiled kernel"
                                                    : "by the accumulator rule (not matched to a compiled kernel)",
                     l.issue_from_sass ? "from the compiled kernel's SASS (fp32's time is within issue's)"
                                       : "estimated from the schedule (no compiled tile loop used)");
    std::string units = "    share of block time:";
    for (int u = 0; u <= int(HwUnit::latency); ++u) units += fmt::format(" {} {:.0f}%", to_string(HwUnit(u)), 100 * l.share[std::size_t(u)]);
    s += units + "\n";
    std::string alone = "    each unit alone:";
    for (int u = 0; u < kHwUnitCount; ++u) alone += fmt::format(" {} {}", to_string(HwUnit(u)), seconds_text(l.unit_s[std::size_t(u)]));
    s += alone + "\n";
  }
  return s;
}

}  // namespace flashlab::cli
