// The one JSON form of a configuration (flashlab/config/config_json.hpp): it reads back to the same
// problem, reads format-1 trace headers' key names by the documented rule, and names the field of
// every error.
#include <doctest/doctest.h>

#include <string>

#include "flashlab/config/config_json.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/config_from_json.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "../../common/config_helpers.hpp"

using namespace flashlab;
using json = nlohmann::json;

namespace {

Problem sample() {
  Config c = test::small(Algo::v1, 1000, 700, 64, 64, 32, parse_mask("window:30,10"));
  c.batch = 2;
  c.heads = 3;
  c.dtype = Dtype::bf16;
  c.warps = 8;
  return resolve(c);
}

// config_from_json(j) must throw a ConfigError whose message contains `needle`.
void rejects(const json& j, const std::string& needle) {
  try {
    config_from_json(j, "cfg");
    FAIL("accepted: " << j.dump());
  } catch (const ConfigError& e) {
    INFO(std::string(e.what()));
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("config_json: the schema's keys and values") {
  const json j = config_json(sample(), "gpt2-small");
  // 1000 / 64 -> T_r = 16 (ragged last block of 40 rows), 700 / 32 -> T_c = 22 (28 columns)
  CHECK(j.at("n_q") == 1000);
  CHECK(j.at("t_r") == 16);
  CHECK(j.at("t_c") == 22);
  CHECK(j.at("e_in") == 2);  // bf16
  CHECK(j.at("mask") == "window:30,10");
  CHECK(j.at("split") == "split-k");     // V1's default
  CHECK(j.at("block_skip") == false);    // V1's default
  CHECK(j.at("model") == "gpt2-small");
  // FA1 Alg. 1 as written: K/V blocks outer, one thread block per (batch, head), O rescaled every step
  CHECK(j.at("order") == "kv-outer");
  CHECK(j.at("grid") == "head");
  CHECK(j.at("rescale") == "step");
  CHECK(j.at("preset") == true);
  CHECK(j.at("kv_heads") == 3);  // one K/V head per head unless given
  CHECK(j.at("pass") == "forward");
  CHECK(!j.contains("backward_form"));  // V2's backward only
  CHECK(j.at("splits") == 1);
  CHECK(j.at("kernel") == "flashlab");
  CHECK(j.size() == 28);  // 23 config keys, model, and the 4 switch keys of a tiled forward
}

TEST_CASE("config_json: the switches of V1 and V2 (order, grid, rescale, preset), none for standard attention") {
  Config c;
  c.algo = Algo::standard;
  c.n_q = c.n_k = 256;
  c.d = 64;
  const json st = config_json(resolve(c));
  for (const char* key : {"order", "grid", "rescale", "preset"}) CHECK_FALSE(st.contains(key));
  c.algo = Algo::v2;
  c.order = LoopOrder::kv_outer;  // a variant between V1 and V2
  const json v = config_json(resolve(c));
  CHECK(v.at("order") == "kv-outer");
  CHECK(v.at("grid") == "qblock");     // V2's preset
  CHECK(v.at("rescale") == "delayed");  // V2's preset
  CHECK(v.at("preset") == false);
  CHECK(config_json(resolve(config_from_json(v, "cfg").config)) == v);
  // absent switches read as the algorithm's preset (configs written before the switches)
  json old = v;
  for (const char* key : {"order", "grid", "rescale", "preset"}) old.erase(key);
  CHECK(config_json(resolve(config_from_json(old, "cfg").config)).at("order") == "q-outer");
  // preset is derived: it must say what the switches are
  json wrong = v;
  wrong["preset"] = true;
  rejects(wrong, "cfg.preset = true: false");
}

TEST_CASE("config_from_json reads config_json back to the same problem") {
  const Problem p = sample();
  const ConfigJson back = config_from_json(config_json(p, "m"), "cfg");
  CHECK(back.model == "m");
  CHECK(config_json(resolve(back.config), "m") == config_json(p, "m"));
  // the derived keys and the model are optional
  json j = config_json(p);
  for (const char* key : {"t_r", "t_c", "e_in", "model"}) j.erase(key);
  CHECK(config_json(resolve(config_from_json(j, "cfg").config)) == config_json(p));
}

TEST_CASE("format-1 trace headers' key names: nq nk br bc sram read as n_q n_k b_r b_c sram_capacity_bytes") {
  const Problem p = sample();
  json j = config_json(p);
  for (auto [old_key, key] : {std::pair{"nq", "n_q"}, {"nk", "n_k"}, {"br", "b_r"}, {"bc", "b_c"},
                              {"sram", "sram_capacity_bytes"}}) {
    j[old_key] = j.at(key);
    j.erase(key);
  }
  for (const char* key : {"t_r", "t_c", "e_in", "model"}) j.erase(key);  // format 1 had none of these
  CHECK(config_json(resolve(config_from_json(j, "cfg").config)) == config_json(p));
  // an error names the key as written
  json bad = j;
  bad["nq"] = -9;
  rejects(bad, "cfg.nq = -9");
  // one field under both names is refused
  json both = config_json(p);
  both["br"] = 64;
  rejects(both, "cfg.br = given with b_r");
}

TEST_CASE("config_from_json: missing, unknown, mistyped and out-of-range values name their field") {
  const json good = config_json(sample());
  const auto without = [&](const char* key) {
    json j = good;
    j.erase(key);
    return j;
  };
  const auto with = [&](const char* key, const json& v) {
    json j = good;
    j[key] = v;
    return j;
  };
  rejects(json::array(), "cfg = an array of 0 values: a JSON object");
  rejects(without("n_q"), "cfg.n_q = missing");
  rejects(without("sram_capacity_bytes"), "cfg.sram_capacity_bytes = missing");
  rejects(without("split"), "cfg.split = missing");
  rejects(with("extra", 1), "cfg = unknown key \"extra\"");
  rejects(with("d", 4.5), "cfg.d = 4.5: an integer");
  rejects(with("d", "64"), "cfg.d = \"64\": an integer");
  rejects(with("block_skip", 1), "cfg.block_skip = 1: true or false");
  rejects(with("scale", "x"), "cfg.scale = \"x\": a number");
  rejects(with("mask", "diagonal"), "cfg.mask = diagonal");
  rejects(with("warps", 0), "cfg.warps = 0: an integer from 1 to 32");
  rejects(with("n_q", 99999999999999999999.0), "cfg.n_q");
  rejects(with("b_r", 0), "cfg.b_r = 0");  // resolve()'s "br" named by the schema's key
  rejects(with("sram_capacity_bytes", 100), "the capacity is 100 bytes");  // the tiles do not fit
  rejects(with("t_r", 15), "cfg.t_r = 15: 16, T_r = ceil(N_q / B_r)");
  rejects(with("e_in", 4), "cfg.e_in = 4: 2");
  rejects(with("model", 3), "cfg.model = 3: a string");
}

TEST_CASE("config_json: kv_heads round-trips, reads as heads when absent, and is validated") {
  Config c;
  c.n_q = c.n_k = 256;
  c.heads = 8;
  c.kv_heads = 2;
  const json j = config_json(resolve(c));
  CHECK(j.at("kv_heads") == 2);
  CHECK(resolve(config_from_json(j, "cfg").config).kv_heads == 2);
  json old = j;
  old.erase("kv_heads");  // a config written before grouped queries: one K/V head per head
  CHECK(resolve(config_from_json(old, "cfg").config).kv_heads == 8);
  json bad = j;
  bad["kv_heads"] = 3;
  rejects(bad, "cfg.kv_heads = 3: an integer from 1 to heads (8) that divides heads");
}
