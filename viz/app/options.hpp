// options.hpp — the viewer's command line: the simulator's configuration flags (the same table as
// the `flashlab` command, flags/, flashlab_flags) and what to show, for how many frames.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"
#include "panels/viewer.hpp"

namespace flashlab::viz {

/// The picture format of --screenshot, from the file name's extension.
enum class ImageFormat { png, jpeg };

struct AppOptions {
  Config config;
  std::string model;           // model preset named by --model ("" when none)
  int frames = 0;              // --frames N: render N frames, print frame-time figures, exit
  std::string screenshot;      // --screenshot FILE.png|.jpg|.jpeg: write the last frame and exit
  ImageFormat screenshot_format = ImageFormat::png;
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

/// What parse_options decided.
struct ParseOutcome {
  std::optional<int> exit;  // the code to leave with (0 after --help, 2 for bad input); empty: run
  std::string message;      // --help's text, or "<field> = <value>: <allowed>" for bad input
};

/// Parses argv into `out` and checks every value before a window opens: no value empty (the rule
/// of every flashlab program, flags/values.hpp), numbers against their ranges, --select and
/// --hover as exactly two indices of the resolved config's T_r x T_c tiles, --step against the
/// steps of the playback the chosen tab shows (playback_steps), --screenshot's extension
/// (image_format), --screenshot and --layout against the file system (output_path() of
/// flashlab/trace/output_file.hpp, and the temporary file created and removed; `out` then holds
/// the file written: a symbolic link's target). Unknown flags, CLI11 parse errors and ConfigErrors
/// (including resolve()'s) all give exit 2 with a message naming the flag, the value and what is
/// allowed. Throws nothing.
ParseOutcome parse_options(int argc, const char* const* argv, AppOptions& out);

/// The flags of the viewer's command line that take a value ("--frames", "--nq", ...), listed
/// from the same CLI11 app parse_options builds (for tests that walk every flag).
std::vector<std::string> value_flags();

/// The format a screenshot named `path` is written in: .png -> png; .jpg, .jpeg -> jpeg (any
/// case). Throws ConfigError(field, path, "a file name ending in .png, .jpg or .jpeg ...") otherwise.
ImageFormat image_format(const std::string& field, const std::string& path);

/// The steps of the playback tab `t` shows for config `c`, the range of --step being 0 to this
/// (Viewer::seek clamps there): the schedule's Counters::steps for one (batch, head), counted by
/// the executor; on the compare tab the larger of V1's and V2's (as Comparison::total_steps).
/// Throws ConfigError when `c` does not resolve.
std::uint64_t playback_steps(const Config& c, Tab t);

}  // namespace flashlab::viz
