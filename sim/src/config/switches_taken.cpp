// switches_taken.cpp — which of the five switches of a tiled forward each algorithm takes
// (config.hpp untaken_switch, without_untaken_switches; docs/model.md "Variants").
#include <optional>
#include <string>

#include "flashlab/config/config.hpp"

namespace flashlab {

std::optional<UntakenSwitch> untaken_switch(const Config& c) {
  if (c.algo == Algo::v1 || c.algo == Algo::v2) return std::nullopt;  // all five: the corners V1 and V2
  const bool standard = c.algo == Algo::standard;
  const std::string loop =
      standard ? "it is a switch of --algo v1 and v2 (standard attention walks no tiles: it has no loop order, "
                 "grid, rescaling or warp split to change)"
               : "it is a switch of --algo v1 and v2 (FA3 keeps FA2's loop: q-outer, qblock, delayed, split-q; "
                 "its own switches are --warp-specialize, --stages, --pingpong, --intra-overlap, --scheduler)";
  if (c.order) return UntakenSwitch{"order", std::string(to_string(*c.order)), loop};
  if (c.grid) return UntakenSwitch{"grid", std::string(to_string(*c.grid)), loop};
  if (c.rescale) return UntakenSwitch{"rescale", std::string(to_string(*c.rescale)), loop};
  if (c.split) return UntakenSwitch{"warp-split", std::string(to_string(*c.split)), loop};
  // V3 takes --block-skip on (FA3 always skips hidden tiles; resolve_v3.cpp refuses off)
  if (standard && c.block_skip)
    return UntakenSwitch{"block-skip", std::string(on_off(*c.block_skip)),
                         "it is a switch of --algo v1, v2 (and v3: on only); standard attention computes every "
                         "score, it has no tiles to skip"};
  return std::nullopt;
}

Config without_untaken_switches(Config c, Untaken which) {
  if (c.algo == Algo::v1 || c.algo == Algo::v2) return c;
  const Switches preset = preset_switches(c.algo);
  const bool all = which == Untaken::all;
  if (all || c.order == preset.order) c.order.reset();
  if (all || c.grid == preset.grid) c.grid.reset();
  if (all || c.rescale == preset.rescale) c.rescale.reset();
  if (all || c.split == preset.split) c.split.reset();
  if (c.algo == Algo::standard && (all || c.block_skip == preset.block_skip)) c.block_skip.reset();
  return c;
}

}  // namespace flashlab
