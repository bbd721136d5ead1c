#include "trace_helpers.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "flashlab/contract/error.hpp"
#include "flashlab/trace/trace_io.hpp"

namespace flashlab::test {

Event ev(std::uint32_t block, std::uint32_t step, Op op, Tensor t, int i, int j, unsigned rows, unsigned cols,
         std::uint64_t bytes, int warp, Eq eq) {
  Event e;
  e.block = block;
  e.step = step;
  e.op = op;
  e.tensor = t;
  e.i = i;
  e.j = j;
  e.rows = rows;
  e.cols = cols;
  e.bytes = bytes;
  e.warp = std::int16_t(warp);
  e.eq = eq;
  return e;
}

std::string listing(const std::vector<Event>& events) {
  std::string s;
  for (const Event& e : events) s += event_line(e) + "\n";
  return s;
}

std::string header_text(const Trace& t) {
  const std::string text = encode_trace(t, TraceFormat::text);
  const std::size_t h0 = text.find("\nheader ") + 8;
  return text.substr(h0, text.find('\n', h0) - h0);
}

std::string replaced(std::string json, const std::string& from, const std::string& to) {
  const std::size_t at = json.find(from);
  if (at == std::string::npos) throw std::logic_error("replaced: \"" + from + "\" not found");
  return json.replace(at, from.size(), to);
}

bool same_events(const std::vector<Event>& a, const std::vector<Event>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(Event)) == 0);
}

namespace {
bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}
}  // namespace

bool same_trace(const Trace& a, const Trace& b) {
  const TraceHeader &x = a.header, &y = b.header;
  if (x.source != y.source || x.level != y.level || x.gpu != y.gpu || x.command != y.command || x.model != y.model ||
      x.inputs != y.inputs)
    return false;
  const Config &c = x.config, &d = y.config;
  if (c.algo != d.algo || c.n_q != d.n_q || c.n_k != d.n_k || c.d != d.d || c.b_r != d.b_r || c.b_c != d.b_c ||
      c.sram_bytes != d.sram_bytes || c.batch != d.batch || c.heads != d.heads || c.dtype != d.dtype ||
      c.mask.kind != d.mask.kind || c.mask.left != d.mask.left || c.mask.right != d.mask.right ||
      c.block_skip != d.block_skip || c.scale != d.scale || c.warps != d.warps || c.split != d.split || c.gpu != d.gpu)
    return false;
  if (!same_events(a.events, b.events) || a.stats.size() != b.stats.size()) return false;
  for (std::size_t k = 0; k < a.stats.size(); ++k) {
    const BlockStats &p = a.stats[k], &q = b.stats[k];
    if (p.i != q.i || p.snapshots.size() != q.snapshots.size()) return false;
    for (std::size_t s = 0; s < p.snapshots.size(); ++s) {
      const StatSnapshot &u = p.snapshots[s], &v = q.snapshots[s];
      if (u.step != v.step || u.j != v.j || !same_floats(u.m, v.m) || !same_floats(u.l, v.l)) return false;
    }
  }
  return true;
}

std::string fresh_dir(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

void rejects(const std::string& bytes, const std::string& needle) {
  try {
    decode_trace(bytes);
    FAIL("accepted: " << needle);
  } catch (const ConfigError& e) {
    INFO(std::string(e.what()));
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
}

}  // namespace flashlab::test
