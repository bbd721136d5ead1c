// session.hpp — the configuration being edited and the analysis of the last valid one.
//
// Every panel reads the same Session; each change goes through apply(), which resolves the config
// (flashlab::resolve) and, when it is valid, analyses it at once so that the picture follows.
// An invalid config keeps the last valid analysis on screen and the ConfigError message in error().
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "flashlab/config/config.hpp"
#include "model/tile_analysis.hpp"

namespace flashlab::viz {

class Session {
 public:
  /// Throws ConfigError when `c` is invalid (the viewer needs one valid config to start from).
  explicit Session(const Config& c);

  /// Takes `c` as the edited config. Valid: analyses it, clears error(), bumps generation() and
  /// returns true. Invalid: keeps the previous analysis, sets error() to the ConfigError message
  /// ("<field> = <value>: <allowed>") and returns false.
  bool apply(const Config& c);

  const Config& config() const { return config_; }
  const std::string& error() const { return error_; }
  bool valid() const { return error_.empty(); }

  /// The last valid config, its resolved problem and its analysis.
  const Config& valid_config() const { return valid_config_; }
  const Problem& problem() const { return analysis_->problem(); }
  const TileAnalysis& analysis() const { return *analysis_; }
  /// Incremented each time a new valid config is analysed; panels rebuild what depends on it.
  std::uint64_t generation() const { return generation_; }

 private:
  Config config_, valid_config_;
  std::string error_;
  std::unique_ptr<TileAnalysis> analysis_;
  std::uint64_t generation_ = 0;
};

}  // namespace flashlab::viz
