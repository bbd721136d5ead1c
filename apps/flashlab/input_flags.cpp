// input_flags.cpp — --q, --k, --v and --seed (input_flags.hpp).
#include "input_flags.hpp"

#include "flashlab/flags/values.hpp"

namespace flashlab::cli {

InputSpec InputFlags::spec() const { return InputSpec{q, k, v, parse_u64("seed", seed)}; }

void add_input_flags(CLI::App& cmd, InputFlags& in, const std::string& group) {
  const auto fill = [&](const char* name, std::string& value, const char* help) {
    cmd.add_option(name, value, help)->type_name("FILL")->group(group);
  };
  fill("--q", in.q, "Q input: random | zero | index (row r holds r) | a number (default random)");
  fill("--k", in.k, "K input, as --q");
  fill("--v", in.v, "V input, as --q");
  cmd.add_option("--seed", in.seed, "seed of the random inputs (default 0)")->type_name("INT")->group(group);
}

}  // namespace flashlab::cli
