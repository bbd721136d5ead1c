// config_json.cpp — the one JSON form of a configuration (config_json.hpp, docs/output.md). Reading
// it back resolves it: schedule/config_from_json.cpp.
#include "flashlab/config/config_json.hpp"

namespace flashlab {

using json = nlohmann::json;

json config_json(const Problem& p, const std::string& model) {
  const Tiling& t = p.tiling;
  json j{{"algo", to_string(p.algo)},
              {"n_q", t.n_q},
              {"n_k", t.n_k},
              {"d", t.d},
              {"b_r", t.b_r},
              {"b_c", t.b_c},
              {"t_r", t.t_r()},
              {"t_c", t.t_c()},
              {"batch", p.batch},
              {"heads", p.heads},
              {"kv_heads", p.kv_heads},
              {"dtype", to_string(p.dtype)},
              {"e_in", p.e_in},
              {"mask", to_string(p.mask)},
              {"block_skip", p.block_skip},
              {"scale", p.scale},
              {"warps", p.warps},
              {"split", to_string(p.split)},
              {"sram_capacity_bytes", p.sram_capacity},
              {"gpu", p.gpu.name},
              {"model", model},
              {"pass", to_string(p.pass)},
              {"splits", p.splits},
              {"kernel", to_string(p.kernel)}};
  if (p.algo == Algo::v2 && p.backward()) j["backward_form"] = to_string(p.backward_form);
  if (p.algo != Algo::standard) {  // the switches of a tiled forward (standard attention walks no tiles)
    j["order"] = to_string(p.order);
    j["grid"] = to_string(p.grid);
    j["rescale"] = to_string(p.rescale);
    j["preset"] = p.is_preset();
  }
  if (p.algo == Algo::v3) {  // V3's switches (config.hpp HopperSwitches)
    j["warp_specialize"] = p.hopper.warp_specialize;
    j["stages"] = p.hopper.stages;
    j["pingpong"] = p.hopper.pingpong;
    j["intra_overlap"] = p.hopper.intra_overlap;
    j["scheduler"] = to_string(p.hopper.scheduler);
  }
  return j;
}

}  // namespace flashlab
