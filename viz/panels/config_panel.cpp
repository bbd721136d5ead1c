// config_panel.cpp — every simulator option (config.hpp Config), applied at each change. An
// invalid value shows resolve()'s ConfigError message here; the other panels keep the last valid
// configuration on screen. Each control's tooltip is its field's documentation (field_tip: the
// text of `flashlab --help`), with what the control itself adds after it.
#include <algorithm>
#include <string>
#include <vector>

#include <imgui.h>

#include "flashlab/config/gpu_spec.hpp"
#include "flashlab/config/presets.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/report/metrics.hpp"
#include "panels/help.hpp"
#include "panels/panels.hpp"

namespace flashlab::viz {
namespace {

void section(const char* title) {
  ImGui::Spacing();
  ImGui::TextDisabled("%s", title);
  ImGui::Separator();
}

bool int_field(const char* label, std::int64_t& v, std::int64_t step, const std::string& help) {
  const std::int64_t fast = step * 16;
  const bool changed = ImGui::InputScalar(label, ImGuiDataType_S64, &v, &step, &fast);
  item_help(help.c_str());
  return changed;
}

bool combo(const char* label, int& index, const std::vector<std::string>& items, const std::string& help) {
  bool changed = false;
  if (ImGui::BeginCombo(label, items[std::size_t(index)].c_str())) {
    for (int k = 0; k < int(items.size()); ++k)
      if (ImGui::Selectable(items[std::size_t(k)].c_str(), k == index)) {
        changed = k != index;
        index = k;
      }
    ImGui::EndCombo();
  }
  item_help(help.c_str());
  return changed;
}

// An optional setting: "default" (resolve() decides) or one of the given values.
template <class T>
bool optional_combo(const char* label, std::optional<T>& v, const std::vector<std::string>& names,
                    const std::vector<T>& values, const std::string& help) {
  int index = 0;
  for (std::size_t k = 0; k < values.size(); ++k)
    if (v && *v == values[k]) index = int(k) + 1;
  std::vector<std::string> items{"default"};
  items.insert(items.end(), names.begin(), names.end());
  if (!combo(label, index, items, help)) return false;
  if (index == 0) v.reset();
  else v = values[std::size_t(index - 1)];
  return true;
}

bool model_combo(Config& c, std::string& model) {
  std::vector<std::string> items{"custom"};
  for (const auto& n : model_preset_names()) items.push_back(n);
  int index = 0;
  for (std::size_t k = 1; k < items.size(); ++k)
    if (items[k] == model) index = int(k);
  if (!combo("model", index, items,
             field_tip("--model", "custom: no preset. Here it sets the heads, the head dim d, N_q = N_k = its context "
                                  "and its mask (causal, or Mistral's sliding window); the K/V heads keep theirs.")))
    return false;
  model = index == 0 ? "" : items[std::size_t(index)];
  if (model.empty()) return false;
  const ModelSpec& m = model_preset(model);
  c.heads = m.heads;
  c.d = m.d;
  c.n_q = c.n_k = m.context;
  c.mask = m.mask;
  return true;
}

bool tile_fields(Config& c, const Problem& p) {
  bool changed = false;
  int mode = c.auto_blocks ? 1 : (c.b_r || c.b_c) ? 2 : 0;
  if (combo("tiles", mode, {"default (FA2)", "auto (V1 rule)", "custom"},
            field_tip("--br", "default (FA2): 128 x 128 up to d = 64; auto (V1 rule): the rule above for B_r and "
                              "B_c; custom: your B_r, B_c."))) {
    changed = true;
    c.auto_blocks = mode == 1;
    if (mode == 2) {
      c.b_r = p.tiling.b_r;
      c.b_c = p.tiling.b_c;
    } else {
      c.b_r.reset();
      c.b_c.reset();
    }
  }
  if (mode == 2) {
    std::int64_t b_r = c.b_r.value_or(p.tiling.b_r), b_c = c.b_c.value_or(p.tiling.b_c);
    if (int_field("B_r", b_r, 16, field_tip("--br", "Q_i is a (B_r, d) block; T_r = ceil(N_q / B_r)."))) {
      c.b_r = b_r;
      changed = true;
    }
    if (int_field("B_c", b_c, 16, field_tip("--bc", "K_j and V_j are (B_c, d) blocks; T_c = ceil(N_k / B_c)."))) {
      c.b_c = b_c;
      changed = true;
    }
  } else {
    ImGui::TextDisabled("B_r x B_c = %lld x %lld", static_cast<long long>(p.tiling.b_r),
                        static_cast<long long>(p.tiling.b_c));
  }
  bool custom_m = c.sram_bytes.has_value();
  if (ImGui::Checkbox("custom SRAM size", &custom_m)) {
    changed = true;
    if (custom_m) c.sram_bytes = p.sram_capacity;
    else c.sram_bytes.reset();
  }
  item_help(field_tip("--sram", "The on-chip memory one thread block may use; tiles Q_i, K_j, V_j and S_ij must fit.")
                .c_str());
  if (c.sram_bytes) {
    changed |= int_field("M (bytes)", *c.sram_bytes, 1024, field_tip("--sram"));
  } else {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("M = %s (the GPU's shared memory per block)", report::bytes_both(std::uint64_t(p.sram_capacity)).c_str());
    ImGui::PopTextWrapPos();
  }
  return changed;
}

bool mask_fields(Config& c) {
  int kind = int(c.mask.kind);
  bool changed = combo("mask", kind, {"none", "causal (top-left)", "causal (bottom-right)", "window"},
                       field_tip("--mask", "A window keeps a band around the bottom-right diagonal."));
  if (changed) c.mask.kind = MaskKind(kind);
  if (c.mask.kind == MaskKind::window) {
    changed |= int_field("window left", c.mask.left, 64,
                         field_tip("--mask", "LEFT: keys before the (bottom-right aligned) diagonal each query sees."));
    changed |= int_field("window right", c.mask.right, 64,
                         field_tip("--mask", "RIGHT: keys after the diagonal each query sees."));
  }
  return changed;
}

bool scale_field(Config& c, const Problem& p) {
  bool custom = c.scale.has_value(), changed = false;
  if (ImGui::Checkbox("custom softmax scale", &custom)) {
    changed = true;
    if (custom) c.scale = p.scale;
    else c.scale.reset();
  }
  item_help(field_tip("--scale", "It changes the numbers (m, l, O), not the traffic.").c_str());
  if (c.scale) {
    double v = *c.scale;
    if (ImGui::InputDouble("scale", &v, 0.01, 0.1, "%.6g")) {
      c.scale = v;
      changed = true;
    }
    item_help(field_tip("--scale").c_str());
  }
  return changed;
}

// The algorithm, the pass and (V2's backward) the backward form.
bool algorithm_fields(Config& c) {
  bool changed = false;
  int algo = int(c.algo);
  changed |= combo("algorithm", algo, {"standard (FA1 Alg. 0)", "V1 (FA1 Alg. 1)", "V2 (FA2 Alg. 1)"},
                   field_tip("--algo", "standard writes S and P to HBM; V1 loops over K/V blocks j outside and Q "
                                       "blocks i inside, keeping O, l, m in HBM; V2 loops over Q blocks i outside "
                                       "and keeps O_i on chip."));
  if (Algo(algo) != c.algo) {  // a switch the new algorithm does not take (resolve refuses it) goes
    c.algo = Algo(algo);
    c = without_untaken_switches(c, Untaken::all);
  }
  int pass = int(c.pass);
  changed |= combo("pass", pass, {"forward", "backward", "both"},
                   field_tip("--pass", "The backward's thread blocks own K/V column blocks and walk the Q blocks. "
                                       "The map shows the first launch that walks tiles."));
  c.pass = Pass(pass);
  if (c.algo == Algo::v2 && c.pass != Pass::forward) {
    int form = int(c.backward_form);
    changed |= combo("backward form", form,
                     {"released (FA2's kernels)", "paper (FA2 Alg. 2)", "deterministic (FA2's kernels)"},
                     field_tip("--backward-form"));
    c.backward_form = BackwardForm(form);
  }
  return changed;
}

// FA2's launches and split-KV: V2's forward only, reset for every other algorithm and pass.
bool split_kv_fields(Config& c, const Problem& p) {
  bool changed = false;
  if (c.algo != Algo::v2 || c.pass != Pass::forward) {  // split-KV and FA2's launches: V2's forward only
    changed |= c.splits.has_value() || c.kernel != Kernel::flashlab;
    c.splits.reset();
    c.kernel = Kernel::flashlab;
  } else {
    bool fa2 = c.kernel == Kernel::fa2;
    if (ImGui::Checkbox("as PyTorch's FA2 launches it", &fa2)) {
      c.kernel = fa2 ? Kernel::fa2 : Kernel::flashlab;
      changed = true;
    }
    item_help(field_tip("--kernel", "Checked: fa2, FA2's own choices for this call; split-KV when the grid is small.")
                  .c_str());
    bool auto_splits = c.splits ? *c.splits == 0 : c.kernel == Kernel::fa2;
    if (ImGui::Checkbox("split-KV: splits by FA2's heuristic", &auto_splits)) {
      c.splits = auto_splits ? 0 : 1;
      changed = true;
    }
    item_help(field_tip("--splits", "Checked: auto.").c_str());
    if (auto_splits) {
      ImGui::TextDisabled("splits = %lld", static_cast<long long>(p.splits));
    } else {
      std::int64_t splits = c.splits.value_or(1);
      if (int_field("splits", splits, 1, field_tip("--splits", "1: no split."))) {
        c.splits = splits;
        changed = true;
      }
    }
  }
  return changed;
}

// N_q, N_k, d, batch, heads and the input element type.
bool size_fields(Config& c) {
  bool changed = false;
  section("sizes");
  changed |= int_field("N_q", c.n_q, 64, field_tip("--nq", "The sequence length of Q; Q and O are (N_q, d)."));
  changed |= int_field("N_k", c.n_k, 64, field_tip("--nk", "The sequence length of K and V; K and V are (N_k, d)."));
  changed |= int_field("d", c.d, 16, field_tip("--d", "Every Q, K, V, O row has d elements."));
  changed |= int_field("batch", c.batch, 1, field_tip("--batch", "Every count of HBM traffic and work is multiplied by it."));
  changed |= int_field("heads", c.heads, 1, field_tip("--heads", "Each runs the same schedule, so counts multiply by it."));
  int dtype = int(c.dtype);
  changed |= combo("dtype", dtype, {"fp16", "bf16", "fp32"},
                   field_tip("--dtype", "Q, K, V, O take e_in = 2 bytes (fp16, bf16) or 4 (fp32); m, l, L are fp32."));
  c.dtype = Dtype(dtype);
  return changed;
}

// The warps per thread block, their split of each tile, and the GPU preset.
bool warp_gpu_fields(Config& c) {
  bool changed = false;
  section("warps and GPU");
  std::int64_t warps = c.warps.value_or(4);
  if (int_field("warps", warps, 1, field_tip("--warps", "They share each tile by the warp split below."))) {
    c.warps = int(std::clamp<std::int64_t>(warps, -1, 64));
    changed = true;
  }
  changed |= optional_combo<WarpSplit>("warp split", c.split, {"split-Q", "split-K"}, {WarpSplit::split_q, WarpSplit::split_k},
                                       field_tip("--warp-split"));
  std::vector<std::string> gpus = gpu_preset_names();
  int gpu = 0;
  for (std::size_t k = 0; k < gpus.size(); ++k)
    if (gpus[k] == c.gpu) gpu = int(k);
  if (combo("GPU", gpu, gpus, field_tip("--gpu", "It sets the default SRAM size M and the waves of the grid."))) {
    c.gpu = gpus[std::size_t(gpu)];
    changed = true;
  }
  return changed;
}

// What the configuration amounts to (tiles, SRAM, HBM, grid, warp split), or why it is invalid.
void summary(const Session& s) {
  ImGui::Separator();
  if (!s.valid()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
    ImGui::TextWrapped("Invalid: %s", s.error().c_str());
    ImGui::PopStyleColor();
    ImGui::TextDisabled("(the other panels show the last valid configuration)");
    return;
  }
  const Tiling& t = s.problem().tiling;
  const report::Figures& f = s.analysis().figures();
  const auto shown = [&f](const char* key) {
    const report::Metric& m = report::metric(key);
    return report::human(m, m.value(f));
  };
  const auto help = [](const char* key) { item_help(report::metric(key).help.c_str()); };
  ImGui::Text("T_r x T_c = %s x %s = %s tiles", report::group_digits(std::uint64_t(t.t_r())).c_str(),
              report::group_digits(std::uint64_t(t.t_c())).c_str(),
              report::group_digits(std::uint64_t(t.t_r() * t.t_c())).c_str());
  ImGui::Text("SRAM peak %s of M = %s", shown("sram_peak_bytes").c_str(), shown("sram_capacity_bytes").c_str());
  help("sram_peak_bytes");
  ImGui::Text("HBM: read %s, write %s", shown("hbm_read_bytes").c_str(), shown("hbm_write_bytes").c_str());
  help("hbm_total_bytes");
  ImGui::Text("grid: %s thread block%s, %s wave%s on %s", shown("grid_blocks").c_str(),
              f.counters.grid_blocks == 1 ? "" : "s", shown("waves").c_str(), f.counters.waves == 1 ? "" : "s",
              f.problem.gpu.name.c_str());
  help("waves");
  if (f.warp_model) {
    ImGui::TextWrapped("%s: %s of shared memory, %s barriers, %s extra ops", to_string(f.problem.split).data(),
                       shown("warp_smem_bytes").c_str(), shown("warp_barriers").c_str(),
                       shown("warp_extra_ops").c_str());
    help("warp_smem_bytes");
  }
}

}  // namespace

void ConfigPanel::draw(Session& s) {
  Config c = s.config();
  const Problem& p = s.problem();
  bool changed = model_combo(c, model);
  if (!model.empty()) ImGui::TextWrapped("%s", model_preset(model).description.c_str());

  changed |= algorithm_fields(c);
  changed |= split_kv_fields(c, p);
  changed |= size_fields(c);

  section("tiles and SRAM");
  changed |= tile_fields(c, p);

  section("mask");
  changed |= mask_fields(c);
  changed |= optional_combo<bool>("block skip", c.block_skip, {"on", "off"}, {true, false},
                                  field_tip("--block-skip", "On: those tiles are not visited at all."));
  changed |= scale_field(c, p);

  changed |= warp_gpu_fields(c);

  if (changed) s.apply(c);
  summary(s);
}

}  // namespace flashlab::viz
