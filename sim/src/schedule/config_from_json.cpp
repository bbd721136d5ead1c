// config_from_json.cpp — config_json's object read back and resolved (config_from_json.hpp,
// docs/output.md).
#include "flashlab/schedule/config_from_json.hpp"

#include <array>

#include "flashlab/config/json_fields.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"

namespace flashlab {
namespace {

using json = nlohmann::json;
using namespace json_fields;

// Format-1 trace headers wrote these fields under the command's flag names; resolve() names them
// so in its errors too.
struct Rename {
  const char* old_key;
  const char* key;
};
constexpr std::array<Rename, 5> kFormat1Names{{
    {"nq", "n_q"}, {"nk", "n_k"}, {"br", "b_r"}, {"bc", "b_c"}, {"sram", "sram_capacity_bytes"}}};

// The name under which `key` appears in j: the key itself, or its format-1 name.
const char* written(const json& j, const char* key) {
  for (const Rename& r : kFormat1Names)
    if (std::string_view(key) == r.key && j.contains(r.old_key)) return r.old_key;
  return key;
}

void check_names(const json& j, const std::string& where) {
  const std::string pre = where + ".";
  check_keys(j, where, pre,
             {"algo", "n_q", "n_k", "d", "b_r", "b_c", "t_r", "t_c", "batch", "heads", "kv_heads", "dtype", "e_in", "mask",
              "block_skip", "scale", "warps", "split", "order", "grid", "rescale", "preset", "sram_capacity_bytes", "gpu",
              "model", "pass", "backward_form", "splits", "kernel", "nq", "nk", "br", "bc", "sram", "warp_specialize",
              "stages", "pingpong", "intra_overlap", "scheduler"},
             {"algo", "d", "batch", "heads", "dtype", "mask", "block_skip", "scale", "warps", "split", "gpu"});
  for (const Rename& r : kFormat1Names) {
    if (j.contains(r.old_key) && j.contains(r.key))
      bad(pre + r.old_key, "given with " + std::string(r.key),
          "one of the two names of the field (" + std::string(r.old_key) + " is its format-1 name)");
    if (!j.contains(r.old_key) && !j.contains(r.key)) bad(pre + r.key, "missing", "a value: the key is required");
  }
}

// A derived key, when present, must equal the value the config resolves to.
void check_derived(const json& j, const std::string& pre, const char* key, std::int64_t want, const char* rule) {
  if (!j.contains(key)) return;
  const std::int64_t got = get_int(j, pre, key);
  if (got != want) bad(pre + key, std::to_string(got), std::to_string(want) + ", " + rule);
}

}  // namespace

ConfigJson config_from_json(const json& j, const std::string& where) {
  const std::string pre = where + ".";
  check_names(j, where);
  const auto integer = [&](const char* key) { return get_int(j, pre, written(j, key)); };
  ConfigJson out;
  Config& c = out.config;
  c.algo = named(pre + "algo", [&] { return parse_algo(get_string(j, pre, "algo")); });
  c.n_q = integer("n_q");
  c.n_k = integer("n_k");
  c.d = integer("d");
  c.b_r = integer("b_r");
  c.b_c = integer("b_c");
  c.auto_blocks = false;
  c.sram_bytes = integer("sram_capacity_bytes");
  c.batch = integer("batch");
  c.heads = integer("heads");
  if (j.contains("kv_heads")) c.kv_heads = integer("kv_heads");  // absent before GQA: one K/V head per head
  c.dtype = named(pre + "dtype", [&] { return parse_dtype(get_string(j, pre, "dtype")); });
  c.mask = named(pre + "mask", [&] { return parse_mask(get_string(j, pre, "mask")); });
  c.block_skip = get_bool(j, pre, "block_skip");
  c.scale = get_number(j, pre, "scale");
  const std::int64_t warps = integer("warps");
  if (warps < 1 || warps > 32) bad(pre + "warps", std::to_string(warps), "an integer from 1 to 32");
  c.warps = int(warps);
  c.split = named(pre + "split", [&] { return parse_warp_split(get_string(j, pre, "split")); });
  // order, grid, rescale: absent from configs written before the switches (the preset's then)
  if (j.contains("order")) c.order = named(pre + "order", [&] { return parse_order(get_string(j, pre, "order")); });
  if (j.contains("grid")) c.grid = named(pre + "grid", [&] { return parse_grid(get_string(j, pre, "grid")); });
  if (j.contains("rescale"))
    c.rescale = named(pre + "rescale", [&] { return parse_rescale(get_string(j, pre, "rescale")); });
  // pass, backward_form: absent from configs written before the backward pass (forward then)
  if (j.contains("pass")) c.pass = named(pre + "pass", [&] { return parse_pass(get_string(j, pre, "pass")); });
  if (j.contains("backward_form"))
    c.backward_form =
        named(pre + "backward_form", [&] { return parse_backward_form(get_string(j, pre, "backward_form")); });
  // splits, kernel: absent before split-KV (one split, this project's kernels). The values are the
  // resolved ones (a decode step's query heads already folded into n_q, the mask FA2 applies, the
  // split count the heuristic chose): resolving them again with the kernel gives the same problem.
  if (j.contains("splits")) {
    const std::int64_t s = integer("splits");
    if (s < 1 || s > 128) bad(pre + "splits", std::to_string(s), "an integer from 1 to 128");
    c.splits = s;
  }
  if (j.contains("kernel")) c.kernel = named(pre + "kernel", [&] { return parse_kernel(get_string(j, pre, "kernel")); });
  // V3's switches: written for algo v3 only (format 6); resolve() refuses them with another algorithm
  if (j.contains("warp_specialize")) c.warp_specialize = get_bool(j, pre, "warp_specialize");
  if (j.contains("stages")) c.stages = int(named(pre + "stages", [&] { return std::int64_t(parse_stages(std::to_string(integer("stages")))); }));
  if (j.contains("pingpong")) c.pingpong = get_bool(j, pre, "pingpong");
  if (j.contains("intra_overlap")) c.intra_overlap = get_bool(j, pre, "intra_overlap");
  if (j.contains("scheduler"))
    c.scheduler = named(pre + "scheduler", [&] { return parse_scheduler(get_string(j, pre, "scheduler")); });
  c.gpu = get_string(j, pre, "gpu");
  if (j.contains("model")) out.model = get_string(j, pre, "model");
  c = without_untaken_switches(c, Untaken::preset_values);  // the JSON names every switch; only the algorithm's are a choice
  Problem p;
  try {
    p = resolve(c);  // every value in range, tiles within the SRAM capacity
  } catch (const ConfigError& e) {
    std::string field = e.field();
    for (const Rename& r : kFormat1Names)
      if (field == r.old_key) field = written(j, r.key);  // resolve() names fields by their flags
    if (field == "kv-heads") field = "kv_heads";
    if (field == "backward-form") field = "backward_form";
    if (field == "warp-specialize") field = "warp_specialize";
    if (field == "intra-overlap") field = "intra_overlap";
    bad(pre + field, e.value(), e.allowed());
  }
  check_derived(j, pre, "t_r", p.tiling.t_r(), "T_r = ceil(N_q / B_r)");
  check_derived(j, pre, "t_c", p.tiling.t_c(), "T_c = ceil(N_k / B_c)");
  check_derived(j, pre, "e_in", p.e_in, "the bytes of one element of the dtype");
  if (j.contains("preset") && get_bool(j, pre, "preset") != p.is_preset())
    bad(pre + "preset", j.at("preset").dump(),
        std::string(p.is_preset() ? "true" : "false") + ", whether order, grid, rescale, split and block skip are the "
                                                          "algorithm's preset");
  return out;
}

}  // namespace flashlab
