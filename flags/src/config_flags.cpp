// config_flags.cpp — one table of configuration flags: name and how each sets a Config; the help
// text of each is its field's documentation (config/field_docs.hpp).
#include "flashlab/flags/config_flags.hpp"

#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <string_view>

#include "flashlab/contract/error.hpp"
#include "flashlab/config/field_docs.hpp"
#include "flashlab/config/gpu_spec.hpp"
#include "flashlab/config/presets.hpp"

namespace flashlab::cli {
namespace {

// B_r / B_c: an integer, or `auto` for the V1 paper's rule from M (FA1 Alg. 1 line 1).
void set_block(Config& c, std::optional<std::int64_t>& b, const std::string& field, const std::string& t) {
  if (t == "auto") {
    c.auto_blocks = true;
    return;
  }
  b = parse_int(field, t, int_range(1, kMaxBlock) + " or auto (B_c = ceil(M/(4d)), B_r = min(B_c, d), shrunk to fit)");
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : "|") + n;
  return s;
}

// A flag's help text is its field's documentation (config/field_docs.hpp field_doc(name)).
struct Flag {
  const char* name;   // CLI name, e.g. "--nq"
  const char* field;  // the name errors use, e.g. "nq"
  const char* type;   // what --help shows for the value
  void (*apply)(Config&, const std::string& field, const std::string& text);
};

// In the order build() applies them: --seq before --nq/--nk so that those override it.
const std::vector<Flag>& flag_table() {
  static const std::vector<Flag> table{
      {"--algo", "algo", "ALGO",
       [](Config& c, const std::string&, const std::string& t) { c.algo = parse_algo(t); }},
      {"--seq", "seq", "INT",
       [](Config& c, const std::string& f, const std::string& t) { c.n_q = c.n_k = parse_int_in(f, t, 1, kMaxSeq); }},
      {"--nq", "nq", "INT",
       [](Config& c, const std::string& f, const std::string& t) { c.n_q = parse_int(f, t, int_range(1, kMaxSeq)); }},
      {"--nk", "nk", "INT",
       [](Config& c, const std::string& f, const std::string& t) { c.n_k = parse_int(f, t, int_range(1, kMaxSeq)); }},
      {"--d", "d", "INT",
       [](Config& c, const std::string& f, const std::string& t) { c.d = parse_int(f, t, int_range(1, kMaxD)); }},
      {"--br", "br", "INT|auto",
       [](Config& c, const std::string& f, const std::string& t) { set_block(c, c.b_r, f, t); }},
      {"--bc", "bc", "INT|auto",
       [](Config& c, const std::string& f, const std::string& t) { set_block(c, c.b_c, f, t); }},
      {"--sram", "sram", "BYTES",
       [](Config& c, const std::string& f, const std::string& t) { c.sram_bytes = parse_int(f, t, int_range(1, kMaxSram)); }},
      {"--batch", "batch", "INT",
       [](Config& c, const std::string& f, const std::string& t) { c.batch = parse_int(f, t, int_range(1, kMaxSeq)); }},
      {"--heads", "heads", "INT",
       [](Config& c, const std::string& f, const std::string& t) { c.heads = parse_int(f, t, int_range(1, kMaxSeq)); }},
      {"--kv-heads", "kv-heads", "INT",
       [](Config& c, const std::string& f, const std::string& t) { c.kv_heads = parse_int(f, t, int_range(1, kMaxSeq)); }},
      {"--dtype", "dtype", "DTYPE",
       [](Config& c, const std::string&, const std::string& t) { c.dtype = parse_dtype(t); }},
      {"--mask", "mask", "MASK",
       [](Config& c, const std::string&, const std::string& t) { c.mask = parse_mask(t); }},
      {"--block-skip", "block-skip", "on|off",
       [](Config& c, const std::string&, const std::string& t) { c.block_skip = parse_block_skip(t); }},
      {"--order", "order", "ORDER",
       [](Config& c, const std::string&, const std::string& t) { c.order = parse_order(t); }},
      {"--grid", "grid", "GRID",
       [](Config& c, const std::string&, const std::string& t) { c.grid = parse_grid(t); }},
      {"--rescale", "rescale", "RESCALE",
       [](Config& c, const std::string&, const std::string& t) { c.rescale = parse_rescale(t); }},
      {"--pass", "pass", "PASS",
       [](Config& c, const std::string&, const std::string& t) { c.pass = parse_pass(t); }},
      {"--backward-form", "backward-form", "FORM",
       [](Config& c, const std::string&, const std::string& t) { c.backward_form = parse_backward_form(t); }},
      {"--splits", "splits", "N|auto",
       [](Config& c, const std::string&, const std::string& t) { c.splits = parse_splits(t); }},
      {"--kernel", "kernel", "KERNEL",
       [](Config& c, const std::string&, const std::string& t) { c.kernel = parse_kernel(t); }},
      {"--scale", "scale", "FLOAT",
       [](Config& c, const std::string& f, const std::string& t) {
         const std::string allowed = "a number > 0 (decimal and finite), e.g. 0.125";
         const double scale = parse_number(f, t, allowed);
         if (!(scale > 0)) throw ConfigError(f, t, allowed);
         c.scale = scale;
       }},
      {"--warps", "warps", "INT",
       [](Config& c, const std::string& f, const std::string& t) { c.warps = int(parse_int_in(f, t, 1, 32)); }},
      {"--warp-split", "warp-split", "SPLIT",
       [](Config& c, const std::string&, const std::string& t) { c.split = parse_warp_split(t); }},
      {"--warp-specialize", "warp-specialize", "on|off",
       [](Config& c, const std::string& f, const std::string& t) { c.warp_specialize = parse_on_off(f, t); }},
      {"--stages", "stages", "1|2|3",
       [](Config& c, const std::string&, const std::string& t) { c.stages = parse_stages(t); }},
      {"--pingpong", "pingpong", "on|off",
       [](Config& c, const std::string& f, const std::string& t) { c.pingpong = parse_on_off(f, t); }},
      {"--intra-overlap", "intra-overlap", "on|off",
       [](Config& c, const std::string& f, const std::string& t) { c.intra_overlap = parse_on_off(f, t); }},
      {"--scheduler", "scheduler", "SCHEDULER",
       [](Config& c, const std::string&, const std::string& t) { c.scheduler = parse_scheduler(t); }},
      {"--gpu", "gpu", "GPU",
       [](Config& c, const std::string&, const std::string& t) { c.gpu = gpu_preset(t).name; }},
  };
  return table;
}

// A flag's former name, still read for a release: the committed GPU data and scripts/gpu write
// `--split split-q` (issue 26: `--split` read as the warp split beside `--splits`, split-KV).
struct FormerName {
  const char* name;   // "--split"
  const char* field;  // "split"
  const char* now;    // the flag's field now, "warp-split"
};
constexpr FormerName kFormerNames[] = {{"--split", "split", "warp-split"}};

// The notice a former name prints on standard error (never standard output: scripts parse it).
std::string former_name_notice(const FormerName& f) {
  return std::string("flashlab: ") + f.name + " is now --" + f.now + "; " + f.name + " will be removed\n";
}

// The field a flag's field names now: `field` itself, or the field a former name stands for.
std::string current_field(const std::string& field) {
  for (const FormerName& f : kFormerNames)
    if (field == f.field) return f.now;
  return field;
}

// Config's defaults with the model preset `model` (a canonical name, "" for none) applied.
Config with_model(const std::string& model) {
  Config c;
  if (!model.empty()) {
    const ModelSpec& spec = model_preset(model);
    c.heads = spec.heads;
    c.kv_heads = spec.kv_heads;
    c.d = spec.d;
    c.n_q = c.n_k = spec.context;
    c.mask = spec.mask;
  }
  return c;
}

// Records which flags were given: --heads over a preset without --kv-heads means one K/V head per
// query head again, not the preset's (finish()).
struct GivenHeads {
  bool heads = false, kv = false;
  void saw(std::string_view field) {
    heads = heads || field == "heads";
    kv = kv || field == "kv-heads";
  }
  void finish(Config& c) const {
    if (heads && !kv) c.kv_heads.reset();
  }
};

}  // namespace

const std::vector<std::string>& config_flag_fields() {
  static const std::vector<std::string> fields = [] {
    std::vector<std::string> out;
    for (const Flag& f : flag_table()) out.emplace_back(f.field);
    return out;
  }();
  return fields;
}

std::string model_name(const std::string& text) {
  if (text.empty() || text == "none") return "";
  try {
    return model_preset(text).name;
  } catch (const ConfigError& e) {  // an unknown name: the flag also takes none
    throw ConfigError(e.field(), e.value(), e.allowed() + ", or none");
  }
}

Config build_config(const std::vector<FlagText>& given, const std::string& model) {
  const auto& table = flag_table();
  std::vector<std::pair<std::size_t, const FlagText*>> ordered;
  for (const FlagText& g : given) {
    const std::string field = current_field(g.field);  // a former name, silently (the GPU data's flags)
    std::size_t k = 0;
    while (k < table.size() && field != table[k].field) ++k;
    if (k == table.size()) throw ConfigError("flag", g.field, "one of " + joined(config_flag_fields()) + "|model");
    ordered.emplace_back(k, &g);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Config c = with_model(model_name(model));
  GivenHeads seen;
  for (const auto& [k, g] : ordered) {
    table[k].apply(c, table[k].field, g->text);
    seen.saw(table[k].field);
  }
  seen.finish(c);
  return c;
}

Config ConfigFlags::build() const {
  Config c = with_model(model());
  GivenHeads seen;
  for (const Given& g : given_)
    if (g.option->count() > 0) {
      const Flag& f = flag_table()[g.flag];
      if (g.former_name)
        for (const Given& h : given_)
          if (h.flag == g.flag && !h.former_name && h.option->count() > 0)
            throw ConfigError(f.field, g.text + " and " + h.text,
                              std::string("one value: ") + g.former_name + " is the former name of " + f.name);
      f.apply(c, f.field, g.text);
      seen.saw(f.field);
    }
  seen.finish(c);
  return c;
}

std::string ConfigFlags::model() const {
  return model_name(model_option_->count() > 0 ? model_text_ : default_model_);
}

std::string ConfigFlags::model_description() const {
  const std::string m = model();
  if (m.empty()) return "";
  // the flags given over what the preset fills (heads, d, N_q = N_k, mask), so that the header
  // does not describe a layer the run is not (issue 24: --model llama3-8b --mask causal)
  static const std::set<std::string_view> preset_fills{"--heads", "--kv-heads", "--d", "--seq", "--nq", "--nk", "--mask"};
  std::string over;
  for (const Given& g : given_)
    if (g.option->count() > 0 && preset_fills.count(flag_table()[g.flag].name))
      over += (over.empty() ? "" : ", ") + std::string(flag_table()[g.flag].name) + " " + g.text;
  return model_preset(m).description + (over.empty() ? "" : "; overridden: " + over);
}

std::shared_ptr<const ConfigFlags> add_config_flags(CLI::App& cmd, const ConfigFlagOptions& opt) {
  auto flags = std::make_shared<ConfigFlags>();
  const auto& table = flag_table();
  flags->given_.reserve(table.size() + std::size(kFormerNames));  // the options bind to these strings: no reallocation
  for (std::size_t k = 0; k < table.size(); ++k) {
    if (!opt.algo && std::string_view(table[k].name) == "--algo") continue;
    auto& g = flags->given_.emplace_back();
    g.flag = k;
    g.option = cmd.add_option(table[k].name, g.text, field_help(field_doc(table[k].name)))->type_name(table[k].type)->group("Configuration");
  }
  // Former names: the same flag, left out of --help, with a notice on standard error when given.
  for (const FormerName& f : kFormerNames) {
    std::size_t k = 0;
    while (k < table.size() && std::string_view(table[k].field) != f.now) ++k;
    auto& g = flags->given_.emplace_back();
    g.flag = k;
    g.former_name = f.name;
    g.option = cmd.add_option(f.name, g.text, field_help(field_doc(table[k].name)))
                   ->type_name(table[k].type)
                   ->group("")
                   ->each([notice = former_name_notice(f)](const std::string& v) {
                     if (!v.empty()) std::cerr << notice;  // an empty value is refused, with no notice first
                   });
  }
  flags->default_model_ = opt.default_model;
  FieldDoc model_doc = field_doc("--model");
  if (!opt.default_model.empty()) model_doc.fallback = opt.default_model;  // this command's own default
  flags->model_option_ =
      cmd.add_option("--model", flags->model_text_, field_help(model_doc))
          ->type_name("MODEL")
          ->group("Configuration");
  return flags;
}

}  // namespace flashlab::cli
