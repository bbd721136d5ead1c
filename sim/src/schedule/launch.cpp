// launch.cpp — what can be read off a schedule's data: its checks, loop extents, grids, where
// tiles live and how much SRAM they take (schedule.hpp).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "flashlab/contract/names.hpp"  // to_string(Tensor)
#include "flashlab/schedule/schedule.hpp"
#include "flashlab/schedule/tensor_shape.hpp"

namespace flashlab {
namespace {

bool is_tile_dim(Dim d) { return d == Dim::q_block || d == Dim::kv_block; }

[[noreturn]] void bad(const Launch& l, const std::string& rule) {
  throw std::logic_error("schedule, launch \"" + l.name + "\": " + rule);
}

// The regions an action may name at a level where Q block i and/or K/V block j are known.
void check_actions(const Launch& l, const std::vector<Action>& acts, bool know_i, bool know_j, const char* where) {
  for (const Action& a : acts) {
    const bool moves_data = a.op == Op::load || a.op == Op::store || a.op == Op::atomic;
    const bool async = a.op == Op::arrive || a.op == Op::wait || a.op == Op::commit;
    if (!moves_data && a.op != Op::compute && !async)
      bad(l, std::string(where) + " holds an action that is not a load, store, atomic, compute, arrive, wait or commit");
    if (a.ring > 3 || (a.ring > 0 && (!async || (a.tensor != Tensor::K && a.tensor != Tensor::V))))
      bad(l, std::string(where) + ": a stage ring (1 to 3 stages) belongs to an arrive or wait on K or V");
    if (a.deferred && &acts != &l.body) bad(l, std::string(where) + ": only body actions are deferred");
    if (!moves_data) continue;
    if (a.tensor == Tensor::none) bad(l, std::string(where) + " loads or stores no tensor");
    if (placement_of(l, a.tensor) == Memory::hbm)
      bad(l, "tensor " + std::string(to_string(a.tensor)) + " is moved but has no placement");
    switch (a.region) {
      case Region::q_block:
        if (!know_i || !per_query(a.tensor)) bad(l, std::string(where) + ": a q_block region needs Q block i and a per-query tensor");
        if (per_split(a.tensor) && std::none_of(l.loops.begin(), l.loops.end(), [](const Loop& x) { return x.dim == Dim::kv_split; }))
          bad(l, std::string(where) + ": a q_block region of a per-split tensor needs a kv_split loop (which split's copy)");
        break;
      case Region::kv_block:
        if (!know_j || !per_key(a.tensor))
          bad(l, std::string(where) + ": a kv_block region needs K/V block j and a per-key tensor");
        break;
      case Region::q_block_splits:
        if (!know_i || (!per_split(a.tensor) && a.tensor != Tensor::dQacc))
          bad(l, std::string(where) + ": a q_block_splits region needs Q block i and a per-split tensor");
        break;
      case Region::whole: break;
      case Region::none: bad(l, std::string(where) + ": a load or store needs a region");
    }
    if (a.padded && a.region != Region::q_block && a.region != Region::q_block_splits)
      bad(l, std::string(where) + ": a padded action needs a Q-block region (B_r rows of Q block i)");
    if (a.tma_box && (a.op != Op::load || (a.region != Region::q_block && a.region != Region::kv_block)))
      bad(l, std::string(where) + ": a TMA box needs a load of a Q-block or K/V-block region");
    if (a.per_kv_head && (a.region != Region::whole || !per_key(a.tensor) || !walked_loops(l).empty()))
      bad(l, std::string(where) + ": a K/V head's region needs a whole per-key tensor in a launch that walks no tiles");
  }
}

}  // namespace

std::string_view to_string(Memory m) {
  static constexpr std::string_view names[] = {"hbm", "sector", "sram", "registers", "l2", "dram"};
  return names[int(m)];
}

std::int64_t loop_extent(Dim d, const Problem& p) {
  switch (d) {
    case Dim::batch: return p.batch;
    case Dim::head: return p.heads;
    case Dim::q_block: return p.tiling.t_r();
    case Dim::kv_block: return p.tiling.t_c();
    case Dim::q_row: return p.tiling.n_q;
    case Dim::kv_split: return p.splits;
    case Dim::dq_slice: return p.dq_splits;
  }
  return 1;
}

std::vector<Loop> walked_loops(const Launch& l) {
  std::vector<Loop> out;
  if (l.outer_begin.empty() && l.outer_end.empty() && l.body.empty()) return out;
  for (const Loop& x : l.loops)
    if (is_tile_dim(x.dim)) out.push_back(x);
  return out;
}

std::int64_t blocks_per_head(const Launch& l, const Problem& p) {
  std::int64_t n = 1;
  for (const Loop& x : l.loops)
    if (x.thread_block && x.dim != Dim::batch && x.dim != Dim::head) n *= loop_extent(x.dim, p);
  return n;
}

Memory placement_of(const Launch& l, Tensor t) {
  for (const Placement& x : l.placement)
    if (x.tensor == t) return x.memory;
  return Memory::hbm;
}

bool moves(const Schedule& s, Tensor t) {
  for (const Launch& l : s.launches) {
    auto touches = [t](const std::vector<Action>& acts) {
      return std::any_of(acts.begin(), acts.end(), [t](const Action& a) {
        return (a.op == Op::load || a.op == Op::store || a.op == Op::atomic) && a.tensor == t;
      });
    };
    if (touches(l.outer_begin) || touches(l.outer_end) || touches(l.body)) return true;
    for (const auto& step : l.prologue)
      if (touches(step)) return true;
  }
  return false;
}

bool has_warp_roles(const Schedule& s) {
  const auto roles = [](const std::vector<Action>& acts) {
    return std::any_of(acts.begin(), acts.end(), [](const Action& a) { return a.role != Role::block; });
  };
  return std::any_of(s.launches.begin(), s.launches.end(), [&](const Launch& l) {
    return roles(l.outer_begin) || roles(l.outer_end) || roles(l.body) ||
           std::any_of(l.prologue.begin(), l.prologue.end(), roles);
  });
}

bool has_tiles(const Schedule& s) {
  return std::any_of(s.launches.begin(), s.launches.end(), [](const Launch& l) { return !l.body.empty(); });
}

void check_schedule(const Schedule& s) {
  if (s.launches.empty()) throw std::logic_error("schedule: no launch");
  if (s.launches.size() > 0xFFFF) throw std::logic_error("schedule: more than 65535 launches");
  for (const Launch& l : s.launches) {
    bool seen[kDimCount] = {}, sequential = false;
    for (const Loop& x : l.loops) {
      if (seen[int(x.dim)]) bad(l, "a dimension appears twice");
      seen[int(x.dim)] = true;
      if (x.thread_block && sequential) bad(l, "a thread-block loop comes after a sequential loop");
      sequential = sequential || !x.thread_block;
    }
    for (const Placement& x : l.placement) {
      if (x.memory != Memory::sram && x.memory != Memory::registers) bad(l, "a placement other than sram or registers");
      if (x.copies < 1) bad(l, "a placement with fewer than one copy");
    }
    const std::vector<Loop> walked = walked_loops(l);
    const bool has_loop_actions = !l.outer_begin.empty() || !l.outer_end.empty() || !l.body.empty();
    if (has_loop_actions) {
      if (walked.empty() || walked.size() > 2) bad(l, "loop actions need one or two tile loops (q_block, kv_block)");
      if (seen[int(Dim::q_row)]) bad(l, "a q_row loop in a launch that walks tiles");
      if (seen[int(Dim::kv_split)] && (walked.size() != 2 || walked[1].dim != Dim::kv_block || walked[1].thread_block))
        bad(l, "a kv_split loop needs a sequential K/V-block loop inside a Q-block loop (each split walks its K/V blocks)");
      if (seen[int(Dim::dq_slice)] && (walked.size() != 2 || walked[0].dim != Dim::kv_block || walked[0].thread_block))
        bad(l, "a dq_slice loop needs a sequential K/V-block loop outside a Q-block loop (each thread block walks its K/V blocks)");
      if (seen[int(Dim::dq_slice)] && seen[int(Dim::kv_split)]) bad(l, "a kv_split loop and a dq_slice loop together");
      if (!l.body.empty() && walked.size() != 2) bad(l, "a body needs two tile loops");
      if (walked.back().thread_block && walked.size() == 2 && (!l.outer_begin.empty() || !l.outer_end.empty()))
        bad(l, "outer actions around an inner loop of thread blocks (one thread block per tile has no outer level)");
    }
    for (const auto& step : l.prologue) check_actions(l, step, false, false, "the prologue");
    const bool outer_q = !walked.empty() && walked[0].dim == Dim::q_block;
    check_actions(l, l.outer_begin, outer_q, !walked.empty() && !outer_q, "outer_begin");
    check_actions(l, l.outer_end, outer_q, !walked.empty() && !outer_q, "outer_end");
    check_actions(l, l.body, true, true, "the body");
  }
}

std::int64_t tile_bytes(Tensor t, std::int64_t rows, std::int64_t cols, std::int64_t d, int e_in) {
  if (t == Tensor::none) return 0;
  const std::int64_t e = element_bytes_of(t, e_in);
  switch (tensor_shape(t).rows) {
    case RowsOf::query: return rows * row_width(t, d) * e;  // one split's copy of Oacc, Lacc
    case RowsOf::key: return cols * row_width(t, d) * e;
    case RowsOf::score: return rows * cols * e;
  }
  return 0;
}

std::int64_t sram_bytes(const Launch& l, std::int64_t rows, std::int64_t cols, std::int64_t d, int e_in) {
  std::int64_t bytes = 0;
  bool scores = false, grads = false;  // S_ij and P_ij: one buffer; dP_ij and dS_ij: another
  for (const Placement& x : l.placement) {
    if (x.memory != Memory::sram) continue;
    const bool s = x.tensor == Tensor::S || x.tensor == Tensor::P;
    const bool g = x.tensor == Tensor::dP || x.tensor == Tensor::dS;
    if ((s && scores) || (g && grads)) continue;
    scores = scores || s;
    grads = grads || g;
    bytes += x.copies * tile_bytes(x.tensor, rows, cols, d, e_in);
  }
  return bytes;
}

std::int64_t sram_bytes(const Schedule& s, std::int64_t rows, std::int64_t cols, std::int64_t d, int e_in) {
  std::int64_t most = 0;
  for (const Launch& l : s.launches) most = std::max(most, sram_bytes(l, rows, cols, d, e_in));
  return most;
}

}  // namespace flashlab
