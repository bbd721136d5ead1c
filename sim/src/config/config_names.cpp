// config_names.cpp — the names of config values: to_string and parse_* (config.hpp), one pair per
// option; parse_* throws ConfigError naming the field and what it allows.
#include "flashlab/config/config.hpp"

#include <charconv>
#include <string>

#include "flashlab/contract/error.hpp"

namespace flashlab {
namespace {

// `text` as a whole integer; ConfigError(field, text, "an integer") otherwise.
std::int64_t parse_int(std::string_view field, std::string_view text) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size())
    throw ConfigError(std::string(field), std::string(text), "an integer");
  return v;
}

}  // namespace

std::string_view to_string(Algo a) {
  switch (a) {
    case Algo::standard: return "standard";
    case Algo::v1: return "v1";
    case Algo::v2: return "v2";
    case Algo::v3: return "v3";
  }
  return "?";
}

std::string_view to_string(Dtype t) {
  switch (t) {
    case Dtype::fp16: return "fp16";
    case Dtype::bf16: return "bf16";
    case Dtype::fp32: return "fp32";
  }
  return "?";
}

std::string_view on_off(bool v) { return v ? "on" : "off"; }
std::string_view to_string(WarpSplit s) { return s == WarpSplit::split_q ? "split-q" : "split-k"; }
std::string_view to_string(LoopOrder o) { return o == LoopOrder::kv_outer ? "kv-outer" : "q-outer"; }
std::string_view to_string(GridKind g) { return g == GridKind::head ? "head" : "qblock"; }
std::string_view to_string(Rescale r) { return r == Rescale::step ? "step" : "delayed"; }
std::string_view to_string(Pass p) { return p == Pass::forward ? "forward" : p == Pass::backward ? "backward" : "both"; }
std::string_view to_string(BackwardForm f) {
  return f == BackwardForm::released ? "released" : f == BackwardForm::paper ? "paper" : "deterministic";
}
std::string_view to_string(Kernel k) { return k == Kernel::flashlab ? "flashlab" : "fa2"; }
std::string_view to_string(TileScheduler s) { return s == TileScheduler::grid ? "grid" : "persistent"; }

std::string to_string(const Mask& m) {
  switch (m.kind) {
    case MaskKind::none: return "none";
    case MaskKind::causal_tl: return "causal";
    case MaskKind::causal_br: return "causal-br";
    case MaskKind::window: return "window:" + std::to_string(m.left) + "," + std::to_string(m.right);
  }
  return "?";
}

Algo parse_algo(std::string_view t) {
  if (t == "standard") return Algo::standard;
  if (t == "v1") return Algo::v1;
  if (t == "v2") return Algo::v2;
  if (t == "v3") return Algo::v3;
  throw ConfigError("algo", std::string(t), "one of standard, v1, v2, v3");
}

Dtype parse_dtype(std::string_view t) {
  if (t == "fp16") return Dtype::fp16;
  if (t == "bf16") return Dtype::bf16;
  if (t == "fp32") return Dtype::fp32;
  throw ConfigError("dtype", std::string(t), "one of fp16, bf16, fp32");
}

WarpSplit parse_warp_split(std::string_view t) {
  if (t == "split-q" || t == "q") return WarpSplit::split_q;
  if (t == "split-k" || t == "k") return WarpSplit::split_k;
  throw ConfigError("warp-split", std::string(t), "one of split-q, split-k");
}

LoopOrder parse_order(std::string_view t) {
  if (t == "kv-outer") return LoopOrder::kv_outer;
  if (t == "q-outer") return LoopOrder::q_outer;
  throw ConfigError("order", std::string(t), "one of kv-outer, q-outer");
}

GridKind parse_grid(std::string_view t) {
  if (t == "head") return GridKind::head;
  if (t == "qblock") return GridKind::q_block;
  throw ConfigError("grid", std::string(t), "one of head, qblock");
}

Rescale parse_rescale(std::string_view t) {
  if (t == "step") return Rescale::step;
  if (t == "delayed") return Rescale::delayed;
  throw ConfigError("rescale", std::string(t), "one of step, delayed");
}

bool parse_block_skip(std::string_view t) {
  if (t == "on") return true;
  if (t == "off") return false;
  throw ConfigError("block-skip", std::string(t), "one of on, off");
}

Pass parse_pass(std::string_view t) {
  if (t == "forward") return Pass::forward;
  if (t == "backward") return Pass::backward;
  if (t == "both") return Pass::both;
  throw ConfigError("pass", std::string(t), "one of forward, backward, both");
}

BackwardForm parse_backward_form(std::string_view t) {
  if (t == "released") return BackwardForm::released;
  if (t == "paper") return BackwardForm::paper;
  if (t == "deterministic") return BackwardForm::deterministic;
  throw ConfigError("backward-form", std::string(t), "one of released, paper, deterministic");
}

Kernel parse_kernel(std::string_view t) {
  if (t == "flashlab") return Kernel::flashlab;
  if (t == "fa2") return Kernel::fa2;
  throw ConfigError("kernel", std::string(t), "one of flashlab (this project's kernels), fa2 (what FA2's mha_fwd launches)");
}

std::int64_t parse_splits(std::string_view t) {
  if (t == "auto") return 0;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || v < 1 || v > 128)
    throw ConfigError("splits", std::string(t), "auto or an integer from 1 to 128 (FA2's limit)");
  return v;
}

bool parse_on_off(std::string_view field, std::string_view t) {
  if (t == "on") return true;
  if (t == "off") return false;
  throw ConfigError(std::string(field), std::string(t), "one of on, off");
}

int parse_stages(std::string_view t) {
  if (t == "1" || t == "2" || t == "3") return t[0] - '0';
  throw ConfigError("stages", std::string(t), "one of 1, 2, 3 (K/V buffers in V3's stage ring; FA3 uses 2)");
}

TileScheduler parse_scheduler(std::string_view t) {
  if (t == "grid") return TileScheduler::grid;
  if (t == "persistent") return TileScheduler::persistent;
  throw ConfigError("scheduler", std::string(t), "one of grid, persistent");
}

Mask parse_mask(std::string_view t) {
  if (t == "none") return {};
  if (t == "causal" || t == "causal-tl") return Mask{MaskKind::causal_tl, 0, 0};
  if (t == "causal-br") return Mask{MaskKind::causal_br, 0, 0};
  const std::string_view prefix = "window:";
  if (t.substr(0, prefix.size()) == prefix) {
    const std::string_view rest = t.substr(prefix.size());
    const std::string allowed = "window:LEFT,RIGHT with two integers >= 0, or -1 for no limit on that side";
    const auto comma = rest.find(',');
    if (comma == std::string_view::npos) throw ConfigError("mask", std::string(t), allowed);
    Mask m{MaskKind::window, 0, 0};
    try {
      m.left = parse_int("mask", rest.substr(0, comma));
      m.right = parse_int("mask", rest.substr(comma + 1));
    } catch (const ConfigError&) {
      throw ConfigError("mask", std::string(t), allowed);
    }
    if (m.left < -1 || m.right < -1) throw ConfigError("mask", std::string(t), allowed);
    return m;
  }
  throw ConfigError("mask", std::string(t), "one of none, causal, causal-br, window:LEFT,RIGHT");
}

}  // namespace flashlab
