// session.cpp — see session.hpp.
#include "model/session.hpp"

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"

namespace flashlab::viz {

Session::Session(const Config& c)
    : config_(c), valid_config_(c), analysis_(std::make_unique<TileAnalysis>(resolve(c))) {}

bool Session::apply(const Config& c) {
  config_ = c;
  try {
    auto a = std::make_unique<TileAnalysis>(resolve(c));
    analysis_ = std::move(a);
    valid_config_ = c;
    error_.clear();
    ++generation_;
    return true;
  } catch (const ConfigError& e) {
    error_ = e.what();
    return false;
  }
}

}  // namespace flashlab::viz
