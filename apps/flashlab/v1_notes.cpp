// v1_notes.cpp — compare's notes on V1 against standard attention (v1_notes.hpp).
#include "v1_notes.hpp"

#include <fmt/format.h>

#include "flashlab/report/format.hpp"

namespace flashlab::cli {
namespace {

std::uint64_t integer(std::string_view key, const report::Figures& f) { return report::value_of(key, f).integer; }

}  // namespace

std::string v1_notes(const report::Figures& standard, const report::Figures& v1) {
  std::string out;
  const Tiling& t = v1.problem.tiling;
  const bool more = integer("hbm_total_bytes", v1) > integer("hbm_total_bytes", standard);
  if (more && v1.problem.order == LoopOrder::q_outer)  // --order q-outer: no O round trips, K and V per Q block
    out += fmt::format(
        "note: V1 moves more HBM bytes than standard attention here ({} against {}): with the Q blocks outer, each of "
        "its T_r = {} Q blocks reads all of K and V, 2 N_k d e_in bytes a block, more than the 4 N_q N_k e_in of "
        "standard attention's S and P roughly when B_r < d/2 (here B_r = {}, d = {}).\n",
        report::human_bytes(double(integer("hbm_total_bytes", v1))),
        report::human_bytes(double(integer("hbm_total_bytes", standard))), t.t_r(), t.b_r, t.d);
  else if (more)
    out += fmt::format(
        "note: V1 moves more HBM bytes than standard attention here ({} against {}): at each of its T_c = {} K/V blocks "
        "FA1 Alg. 1 reads Q and O and writes O back, with l and m ({} of O, l, m re-reads), about 3 N_q d e_in bytes a "
        "block, more than the 4 N_q N_k e_in of standard attention's S and P roughly when B_c < 3d/4 (here B_c = {}, "
        "d = {}).\n",
        report::human_bytes(double(integer("hbm_total_bytes", v1))),
        report::human_bytes(double(integer("hbm_total_bytes", standard))), t.t_c(),
        report::human_bytes(double(integer("hbm_o_l_m_read_bytes", v1))), t.b_c, t.d);
  const report::Value ts = report::value_of("predicted_seconds", standard), t1 = report::value_of("predicted_seconds", v1);
  if (!ts.none() && !t1.none() && t1.as_double() > ts.as_double() && v1.problem.grid == GridKind::head)
    out += fmt::format(
        "note: V1 is predicted slower than standard attention: one thread block per (batch, head) gives it a grid of "
        "{} for {} SMs, each block walking its T_r x T_c = {} x {} tiles in turn.\n",
        report::group_digits(integer("grid_blocks", v1)), v1.problem.gpu.sms, t.t_r(), t.t_c());
  return out;
}

}  // namespace flashlab::cli
