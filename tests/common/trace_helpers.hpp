// helpers.hpp — small helpers shared by the trace tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/event.hpp"
#include "flashlab/trace/trace.hpp"
#include "config_helpers.hpp"  // small()
#include "trace_file.hpp"      // with_header_json()

namespace flashlab::test {

/// An event written out by hand: block, step, op, tensor, i, j, rows, cols, bytes, warp, eq.
Event ev(std::uint32_t block, std::uint32_t step, Op op, Tensor t, int i, int j, unsigned rows, unsigned cols,
         std::uint64_t bytes = 0, int warp = -1, Eq eq = Eq::none);

/// A readable listing of events for failure messages (one text-form line each).
std::string listing(const std::vector<Event>& events);

/// True when both lists hold the same events in the same order (every field, pad included).
bool same_events(const std::vector<Event>& a, const std::vector<Event>& b);

/// True when every part of two traces is equal; floats compared bit for bit.
bool same_trace(const Trace& a, const Trace& b);

/// The header JSON that the writers write for t (one line).
std::string header_text(const Trace& t);


/// An empty folder of the test's own in the temporary directory: <tmp>/<name>_<pid>, emptied first.
std::string fresh_dir(const std::string& name);

/// What f throws as ConfigError (its what()), or "(no ConfigError)" when it returns.
std::string error_of(const std::function<void()>& f);

/// Checks that decode_trace(bytes) throws ConfigError whose message contains `needle` (doctest).
void rejects(const std::string& bytes, const std::string& needle);

/// `json` with `from` replaced by `to` (once; `from` must occur).
std::string replaced(std::string json, const std::string& from, const std::string& to);

}  // namespace flashlab::test
