// options.hpp — the viewer's command line: the simulator's configuration flags (the same table as
// the `flashlab` command, sim/cli/config_flags.hpp) and what to show, for how many frames.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flashlab/config.hpp"
#include "panels/viewer.hpp"

namespace flashlab::viz {

struct AppOptions {
  Config config;
  std::string model;           // model preset named by --model ("" when none)
  int frames = 0;              // --frames N: render N frames, print frame-time figures, exit
  std::string screenshot;      // --screenshot FILE.png: write the last frame and exit
  std::string layout;          // --layout FILE.json: where the map's grid is on screen
  int width = 1280, height = 720;
  Tab tab = Tab::tile;
  MapMode map_mode = MapMode::classes;
  Metric metric = Metric::hbm_bytes;
  TileRef select;              // --select I,J
  TileRef hover;               // --hover I,J: batch runs put the mouse on this tile (tooltip)
  std::uint64_t step = 0;      // --step K: playback position
  bool play = false;
  double speed = 8;
  bool numerics = false;
  SweepAxis sweep_axis = SweepAxis::block;
  std::vector<std::string> traces;  // --trace FILE (at most twice): traces A and B
};

/// Parses argv. Returns the exit code to leave with (0 after --help) when the program should not
/// run, std::nullopt when it should. Bad values print "<field> = <value>: <allowed>" and give 2.
std::optional<int> parse_options(int argc, char** argv, AppOptions& out);

}  // namespace flashlab::viz
