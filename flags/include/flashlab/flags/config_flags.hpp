// config_flags.hpp — the configuration flags every command shares (--algo --nq --nk --seq --d
// --br --bc --sram --batch --heads --kv-heads --dtype --mask --block-skip --order --grid --rescale
// --pass --backward-form --splits --kernel --scale --warps --warp-split --gpu --model; --split, the
// former name of --warp-split, is still read with a notice on standard error), and the
// flashlab::Config they build.
//
// Usage in a command:
//   auto flags = add_config_flags(*cmd);             // before parsing
//   cmd->callback([flags] { Config c = flags->build(); ... });
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/App.hpp>

#include "flashlab/config/config.hpp"
#include "flashlab/flags/values.hpp"
#include "flashlab/schedule/resolve.hpp"  // resolve(): what a command does with the Config built here

namespace flashlab::cli {

struct ConfigFlagOptions {
  bool algo = true;           // add --algo standard|v1|v2 (commands running several algorithms omit it)
  std::string default_model;  // model preset used when --model is not given ("" or "none": no preset)
};

/// The flags' texts as typed, kept until build() turns them into a Config.
class ConfigFlags {
 public:
  /// Builds the Config in three layers: Config's defaults, then the model preset (heads, d,
  /// N_q = N_k = the model's context, mask), then every flag given explicitly (--seq before
  /// --nq/--nk, so --nq and --nk override --seq). Values are parsed, not range-checked: resolve()
  /// checks ranges. Throws ConfigError("<flag>", text, allowed) for text that does not parse.
  Config build() const;

  /// The model preset in use ("" when none) and its one-line description, with the flags given over
  /// what it fills ("...; overridden: --mask causal, --seq 1024").
  std::string model() const;
  std::string model_description() const;

 private:
  friend std::shared_ptr<const ConfigFlags> add_config_flags(CLI::App&, const ConfigFlagOptions&);
  struct Given {
    std::size_t flag = 0;         // index in the flag table (config_flags.cpp)
    const char* former_name = nullptr;  // the flag's former name when the option is it ("--split")
    CLI::Option* option = nullptr;
    std::string text;
  };
  std::vector<Given> given_;
  CLI::Option* model_option_ = nullptr;
  std::string model_text_;
  std::string default_model_;
};

/// One configuration flag given without a command line (the Python module's keyword arguments):
/// its field name as errors use it ("nq", "block-skip", "br") and its text ("1024", "on", "auto").
struct FlagText {
  std::string field;
  std::string text;
};

/// The field names of the configuration flags, in the order build_config() applies them:
/// algo, seq, nq, nk, d, br, bc, sram, batch, heads, kv-heads, dtype, mask, block-skip, order, grid,
/// rescale, pass, backward-form, splits, kernel, scale, warps, warp-split, gpu (the model is given
/// apart).
const std::vector<std::string>& config_flag_fields();

/// The canonical name of a model preset ("" for "" or "none"); ConfigError("model", ...) for an
/// unknown one.
std::string model_name(const std::string& text);

/// The Config that the flags `given` make, built as ConfigFlags::build() builds it: Config's
/// defaults, then the model preset (model_name(model); "" or "none": none), then each flag in
/// config_flag_fields() order whatever the order of `given` (seq before nq and nk). Throws
/// ConfigError as the flags do, and ConfigError("flag", field, the field names) for a field that
/// is no configuration flag. A flag's former name is read as its flag, without a notice ("split":
/// warp-split, as the committed GPU data's flag lines write it).
Config build_config(const std::vector<FlagText>& given, const std::string& model);

/// Adds the configuration flags to `cmd`. The returned object is filled in when `cmd` is parsed.
std::shared_ptr<const ConfigFlags> add_config_flags(CLI::App& cmd, const ConfigFlagOptions& opt = {});

}  // namespace flashlab::cli
