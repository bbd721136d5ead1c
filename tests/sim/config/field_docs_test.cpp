// The configuration fields' documentation (flashlab/config/field_docs.hpp): every key of the
// config JSON that a user sets has an entry and no entry names another key; the defaults it
// states are those resolve() gives; the help text reads as --help shows it.
#include <doctest/doctest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "flashlab/config/config_json.hpp"
#include "flashlab/config/field_docs.hpp"
#include "flashlab/schedule/resolve.hpp"

using namespace flashlab;

TEST_CASE("field docs: the config JSON's settable keys and the entries' keys are the same set") {
  // v2's backward: the JSON holds every key, backward_form included (config_json.hpp)
  Config c;
  c.pass = Pass::backward;
  const nlohmann::json j = config_json(resolve(c), "llama3-8b");
  const std::set<std::string> derived{"t_r", "t_c", "e_in", "preset"};  // computed, not given (docs/output.md)
  std::set<std::string> json_keys;
  for (const auto& [key, value] : j.items())
    if (!derived.count(key)) json_keys.insert(key);
  Config v3;  // V3's switches: in the JSON of --algo v3 only
  v3.algo = Algo::v3;
  const nlohmann::json j3 = config_json(resolve(v3), "");
  for (const auto& [key, value] : j3.items())
    if (!derived.count(key)) json_keys.insert(key);
  std::set<std::string> doc_keys;
  for (const FieldDoc& d : field_docs())
    if (!d.json_key.empty()) CHECK_MESSAGE(doc_keys.insert(d.json_key).second, "two entries name " << d.json_key);
  CHECK(doc_keys == json_keys);
  CHECK(json_keys.size() == 30);  // 29 keys of V2's backward, 4 derived; V3's 5 switches
}

TEST_CASE("field docs: one entry per flag, each with a summary and its allowed values") {
  std::set<std::string> flags;
  for (const FieldDoc& d : field_docs()) {
    CAPTURE(d.flag);
    CHECK(flags.insert(d.flag).second);
    CHECK(d.flag.rfind("--", 0) == 0);
    CHECK_FALSE(d.summary.empty());
    CHECK_FALSE(d.allowed.empty());
    CHECK(d.summary.find('\n') == std::string::npos);  // one line
    CHECK(&field_doc(d.flag) == &d);
  }
  CHECK_THROWS_AS(field_doc("--nope"), std::out_of_range);
}

TEST_CASE("field docs: the stated defaults and ranges are what resolve() gives and accepts") {
  const Problem p = resolve(Config{});
  CHECK(field_doc("--nq").fallback == std::to_string(p.tiling.n_q));
  CHECK(field_doc("--nk").fallback == std::to_string(p.tiling.n_k));
  CHECK(field_doc("--d").fallback == std::to_string(p.tiling.d));
  CHECK(field_doc("--batch").fallback == std::to_string(p.batch));
  CHECK(field_doc("--heads").fallback == std::to_string(p.heads));
  CHECK(field_doc("--algo").fallback == "v2");
  CHECK(field_doc("--dtype").fallback == "fp16");
  CHECK(field_doc("--mask").fallback == "none");
  CHECK(field_doc("--gpu").fallback == p.gpu.name);
  CHECK(field_doc("--pass").fallback == "forward");
  // N_q's range: 1 to 2^31 - 1 (events store 32-bit rows); resolve() refuses one more
  CHECK(field_doc("--nq").allowed == "an integer from 1 to 2147483647");
  Config big;
  big.n_q = 2147483648;
  CHECK_THROWS_AS(resolve(big), ConfigError);
}

TEST_CASE("field_help: summary, allowed values, details, default") {
  CHECK(field_help(field_doc("--nq")) == "N_q, query rows: an integer from 1 to 2147483647 (default: 1024)");
  CHECK(field_help(field_doc("--dtype")) ==
        "input type: fp16 | bf16 | fp32; accumulation is always fp32 (default: fp16)");
  // no default (--seq sets N_q and N_k, whose defaults are theirs)
  CHECK(field_help(field_doc("--seq")).find("(default") == std::string::npos);
  CHECK(integer_range(-1, 7) == "an integer from -1 to 7");
}
