// report.cpp — summary lines and JSON objects of runs (report.hpp).
#include "report.hpp"

#include <cstdio>

#include "flashlab/config/config_json.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/numerics/numerics.hpp"

namespace flashlab::gpu {
namespace {

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

nlohmann::json bytes_json(const TensorBytes& b) {
  nlohmann::json per = nlohmann::json::object();
  for (int x = 0; x < kTensorCount; ++x)
    if (b[x][0] || b[x][1] || b[x][2])
      per[std::string(to_string(Tensor(x)))] = {{"ld", b[x][0]}, {"st", b[x][1]}, {"red", b[x][2]}};
  return {{"ld", total(b, Dir::read)}, {"st", total(b, Dir::write)}, {"red", total(b, Dir::atomic)}, {"tensors", per}};
}

}  // namespace

std::string summary_line(const RunResult& r) {
  const Problem& p = r.problem;
  const Tiling& t = p.tiling;
  std::string s = std::string(to_string(p.algo)) + " " + std::string(to_string(p.dtype)) + " bh=" +
                  std::to_string(p.bh()) + " N_q=" + std::to_string(t.n_q) + " N_k=" + std::to_string(t.n_k) +
                  " d=" + std::to_string(t.d) + " " + std::to_string(t.b_r) + "x" + std::to_string(t.b_c) + "x" +
                  std::to_string(p.warps) + (p.splits > 1 ? " splits=" + std::to_string(p.splits) : "") +
                  (p.kv_heads != p.heads ? " kv_heads=" + std::to_string(p.kv_heads) : "") + " " + to_string(p.mask) +
                  (p.block_skip ? " skip" : " dense") + ":";
  if (r.events_run)
    s += std::string(" events ") + (r.events_agree ? "agree" : "DIFFER") + " (" + std::to_string(r.gpu_events) +
         " gpu, " + std::to_string(r.sim_events) + " sim; m/l " + std::to_string(r.stat_values - r.stat_differing) +
         "/" + std::to_string(r.stat_values) + ")";
  for (const HeadError& h : r.numbers) {
    s += " | head " + std::to_string(h.bh) + ": O " + fmt("%.2e", h.error.rel_fro_O) + " (tol " +
         fmt("%.1e", h.error.tol_O) + ")";
    if (p.algo != Algo::standard)
      s += " L " + fmt("%.2e", h.error.max_abs_L) + " (" + fmt("%.3f", h.error.L_over_tol) + " of its row's tol)";
    s += h.error.within ? " ok" : " FAIL";
  }
  for (const HeadGradError& h : r.grads)
    s += " | head " + std::to_string(h.bh) + ": dQ " + fmt("%.2e", h.error.rel_fro_dQ) + " dK " +
         fmt("%.2e", h.error.rel_fro_dK) + " dV " + fmt("%.2e", h.error.rel_fro_dV) + " (tol " + fmt("%.1e", h.error.tol) +
         ")" + (h.error.within ? " ok" : " FAIL");
  if (!r.canary_intact) s += " | CANARY OVERWRITTEN";
  if (r.median_ms > 0) s += " | " + fmt("%.4f", r.median_ms) + " ms " + fmt("%.1f", r.tflops) + " TFLOP/s";
  if (p.backward()) s = "backward " + s;
  return s;
}

nlohmann::json to_json(const RunResult& r, const std::string& model) {
  const Problem& p = r.problem;
  nlohmann::json j;
  j["config"] = config_json(p, model);
  j["device"] = {{"name", r.device.name}, {"driver", r.device.driver}, {"cuda_runtime", r.device.runtime},
                 {"sms", r.device.sms}};
  j["events"] = {{"run", r.events_run}, {"agree", r.events_agree}, {"gpu", r.gpu_events}, {"sim", r.sim_events},
                 {"stats_block", r.stats_block}, {"stat_values", r.stat_values},
                 {"stat_differing", r.stat_differing}, {"report", r.diff_report}};
  nlohmann::json nums = nlohmann::json::array();
  for (const HeadError& h : r.numbers)
    nums.push_back({{"bh", h.bh}, {"rel_fro_O", h.error.rel_fro_O}, {"max_abs_O", h.error.max_abs_O},
                    {"max_abs_L", h.error.max_abs_L}, {"L_over_tol", h.error.L_over_tol},
                    {"tol_L", h.error.tol_L}, {"finite", h.error.finite}, {"within", h.error.within}});
  // the tolerances of compare() (numerics.hpp): tol_L is per row, scaled with |L| and the logits
  j["numbers"] = {{"heads", nums}, {"within", r.numbers_within}, {"tol_O", tolerance_O(p)},
                  {"L_compared", p.algo != Algo::standard},
                  {"canary_intact", r.canary_intact}};
  nlohmann::json grads = nlohmann::json::array();
  for (const HeadGradError& h : r.grads)
    grads.push_back({{"bh", h.bh}, {"rel_fro_dQ", h.error.rel_fro_dQ}, {"rel_fro_dK", h.error.rel_fro_dK},
                     {"rel_fro_dV", h.error.rel_fro_dV}, {"max_abs_D", h.error.max_abs_D}, {"tol", h.error.tol},
                     {"finite", h.error.finite}, {"within", h.error.within}});
  j["grads"] = {{"heads", grads}, {"within", r.grads_within}};
  j["timing"] = {{"median_ms", r.median_ms}, {"flops", r.flops}, {"tflops", r.tflops}, {"reps", r.ms.size()}};
  nlohmann::json diffs = nlohmann::json::array();
  for (const ByteDifference& d : explain_differences(p, r.sim_bytes, r.kernel_bytes))
    diffs.push_back({{"tensor", to_string(d.tensor)}, {"dir", d.write ? "st" : "ld"}, {"sim", d.sim},
                     {"kernel", d.kernel}, {"reason", d.reason}});
  j["bytes"] = {{"sim", bytes_json(r.sim_bytes)}, {"kernel", bytes_json(r.kernel_bytes)}, {"differences", diffs}};
  j["sim"] = report::metrics_json(r.sim);
  j["passed"] = r.passed();
  return j;
}

}  // namespace flashlab::gpu
