// l2_model.cpp — the L2 and DRAM levels as an LRU over tiles (l2_model.hpp).
#include "flashlab/executor/l2_model.hpp"

#include <algorithm>

#include "flashlab/executor/action_cost.hpp"  // tensor_element_bytes, direction
#include "flashlab/memory/occupancy.hpp"
#include "flashlab/schedule/tensor_shape.hpp"
#include "l2_lru.hpp"

namespace flashlab {
namespace {

using l2_detail::u64;
using l2_detail::kSector;
using l2_detail::Lru;
constexpr u64 kKvHeadKey = u64(1) << 31;  // the key bit of a K/V head's region (Action::per_kv_head)

bool moves_data(const Action& a) { return a.op == Op::load || a.op == Op::store || a.op == Op::atomic; }

// The (batch, head) pairs a launch's replay runs (`heads`), those of them it counts (`counted`:
// the rest are the tail of a cut replay) and the L2 bytes it gives them (`capacity`).
struct ReplaySample {
  std::int64_t heads = 0, counted = 0;
  double capacity = 0;
};

// How many heads to replay, and which of them count: `slots` thread blocks resident together,
// `blocks` thread blocks and `per_head` recorded accesses per (batch, head).
ReplaySample replay_sample(const Problem& p, std::int64_t slots, std::int64_t blocks, u64 per_head) {
  const std::int64_t bh = p.bh();
  double capacity = double(p.gpu.l2_bytes);
  std::int64_t heads = bh, counted = bh;
  if (blocks == 1) {
    // one head stands for all, with its share of the L2 — under GQA one group of heads, which
    // share their K/V head while they are resident together
    const std::int64_t together = std::min(slots, bh);
    heads = counted = std::max<std::int64_t>(1, std::min(p.group(), together));
    capacity *= double(heads) / double(together);
  } else if (u64(bh) * per_head > kReplayBudget) {
    const std::int64_t tail = (slots + blocks - 1) / blocks;
    heads = std::min<std::int64_t>(bh, std::max<std::int64_t>(std::int64_t(kReplayBudget / std::max<u64>(per_head, 1)),
                                                              2 * tail + (tail + 1) / 2));
    counted = heads < bh ? std::max<std::int64_t>(1, heads - tail) : heads;
  }
  return {heads, counted, capacity};
}

// A cut recording: per tensor and direction, DRAM bytes per requested byte of the replayed
// blocks times the bytes all blocks request (`requested`: one head's, every block).
void extrapolate_cut(TensorBytes& dram, TensorBytes& req, const TensorBytes& requested, std::int64_t counted) {
  for (int x = 0; x < kTensorCount; ++x)
    for (int d = 0; d < kDirCount; ++d) {
      const double all = double(requested[x][d]) * double(counted), part = double(req[x][d]);
      const double f = part > 0 ? all / part : 0;
      dram[x][d] = u64(double(dram[x][d]) * f + 0.5);
      req[x][d] = u64(all + 0.5);
    }
}

// The launch's requests, DRAM bytes and dirty bytes at the end for all batch * heads, from the
// counted heads' sums (`dram`, `req`) and the dirty bytes every replayed head leaves (`dirty`).
// Under the early write-back (`early_rule`), `early` of those dirty bytes left the L2 during the
// launch (Lru::written_early): moved from dirty at the end to DRAM written, for each head that ends
// the launch — with one thread block per head, every head: the rule's f, from the whole launch's
// bytes held, stands for the next waves' evictions.
void scale_to_all(L2Launch& out, const TensorBytes& dram, const TensorBytes& req, const TensorBytes& dirty,
                  const TensorBytes& early, bool early_rule, std::int64_t counted, std::int64_t bh,
                  std::int64_t blocks, std::int64_t slots) {
  const double scale = double(bh) / double(counted);
  auto scaled = [&](u64 v) { return counted == bh ? v : u64(double(v) * scale + 0.5); };
  for (int x = 0; x < kTensorCount; ++x)
    for (int d = 0; d < kDirCount; ++d) {
      out.requests[x][d] = scaled(req[x][d]);
      if (blocks == 1) {
        // one head stands for all: its evictions scale; its dirty bytes stay dirty for the last
        // wave's heads and are evicted by the next wave for the others (under the early write-back
        // they stay dirty for every head, and f of them leaves below)
        const std::int64_t last = early_rule ? bh : std::min(slots, bh);
        out.dram[x][d] = scaled(dram[x][d]) + dirty[x][d] * u64(bh - last);
        out.dirty_at_end[x][d] = dirty[x][d] * u64(last);
      } else {
        // what the last heads' dirty bytes would have been evicted as, had they been replayed in
        // the middle: the counted heads' evictions stand for them
        out.dram[x][d] = scaled(dram[x][d]);
        out.dirty_at_end[x][d] = dirty[x][d];
        if (counted < bh) out.dram[x][d] -= std::min(out.dram[x][d], dirty[x][d]);
      }
      const u64 left = early[x][d] * u64(blocks == 1 ? bh : 1);
      out.dram[x][d] += left;
      out.dirty_at_end[x][d] -= left;
    }
}

}  // namespace

L2Model::L2Model(const Problem& p, const Schedule& s) : p_(p), s_(&s) {
  for (const Launch& l : s.launches) {
    Shape sh;
    sh.blocks = blocks_per_head(l, p);
    sh.walks_tiles = !walked_loops(l).empty();
    sh.early_write_back = l.early_write_back;
    for (const Loop& x : l.loops) {
      if (x.thread_block && (x.dim == Dim::q_block || x.dim == Dim::q_row) && sh.split == Dim::batch) {
        sh.split = x.dim;
        sh.split_descending = x.order == Order::descending;
      }
      if (x.dim == Dim::kv_block) {
        sh.kv_loop = true;
        if (!x.thread_block) sh.kv_seq = true;
      }
      if (x.dim == Dim::q_block) sh.q_loop = true;
    }
    shapes_.push_back(sh);
  }
  programs_.resize(s.launches.size());
  recorded_.assign(s.launches.size(), 0);
  truncated_.assign(s.launches.size(), false);
  truncated_at_.assign(s.launches.size(), 0);
  requested_.assign(s.launches.size(), TensorBytes{});
}

void L2Model::add(Program& prog, Tensor t, Dir dir, u64 key, u64 bytes) const {
  if (bytes == 0) return;
  prog.push_back(Access{std::uint32_t(key), std::uint32_t((bytes + kSector - 1) / kSector * kSector),
                        std::uint8_t(t), dir, false});
}

void L2Model::end_step(Program& prog) const {
  if (!prog.empty()) prog.back().end_of_step = true;
}

// A whole-tensor action inside a step of a launch that walks tiles (V1 line 2): in pieces by Q
// block or K/V block when the launch loops over them.
void L2Model::expand_in_step(Program& prog, const Action& a) const {
  const Tiling& t = p_.tiling;
  const Dir w = direction(a.op);
  const u64 e = u64(tensor_element_bytes(p_, a.tensor)), width = u64(row_width(a.tensor, t.d));
  if (per_query(a.tensor)) {
    for (std::int64_t i = 0; i < t.t_r(); ++i) add(prog, a.tensor, w, u64(i), u64(t.rows(i)) * width * e);
  } else if (per_key(a.tensor)) {
    for (std::int64_t j = 0; j < t.t_c(); ++j) add(prog, a.tensor, w, u64(j), u64(t.cols(j)) * width * e);
  } else {
    for (std::int64_t i = 0; i < t.t_r(); ++i)
      for (std::int64_t j = 0; j < t.t_c(); ++j)
        add(prog, a.tensor, w, u64(i * t.t_c() + j), u64(t.rows(i)) * u64(t.cols(j)) * e);
  }
}

// A prologue step of a launch whose work is its prologue (standard attention): every thread block's
// program, as the kernels split the whole tensors (l2_model.hpp).
void L2Model::expand_whole(const StepView& s) {
  const Tiling& t = p_.tiling;
  const Shape& sh = shapes_[s.launch];
  const std::size_t k = s.launch;
  auto& progs = programs_[k];
  const std::int64_t blocks = sh.split == Dim::q_block ? t.t_r() : sh.split == Dim::q_row ? t.n_q : 1;
  if (std::int64_t(progs.size()) < blocks) progs.resize(std::size_t(blocks));
  Program& scratch = scratch_;
  const u64 e = u64(p_.e_in), d = u64(t.d);
  auto elem = [&](Tensor x) { return u64(tensor_element_bytes(p_, x)); };
  auto width = [&](Tensor x) { return u64(row_width(x, t.d)); };
  for (std::int64_t b = 0; b < blocks; ++b) {
    // past the recording budget: counted in requested_, not kept (l2_model.hpp kRecordBudget)
    if (!truncated_[k] && recorded_[k] >= kRecordBudget) {
      truncated_[k] = true;
      truncated_at_[k] = std::uint32_t(b);
    }
    scratch.clear();
    Program& prog = truncated_[k] ? scratch : progs[std::size_t(b)];
    const std::int64_t idx = sh.split_descending ? blocks - 1 - b : b;
    // This block's nr query rows: Q block i (key i), row r (key r) or all of them (key 0).
    std::int64_t nr = t.n_q;
    if (sh.split == Dim::q_block) nr = t.rows(idx);
    if (sh.split == Dim::q_row) nr = 1;
    const u64 qkey = sh.split == Dim::batch ? 0 : u64(idx);
    // start: loads of per-query tensors, whole K/V and S/P rows when there is no K/V loop
    for (const Action& a : s.actions) {
      if (a.op != Op::load) continue;
      if (per_query(a.tensor)) add(prog, a.tensor, Dir::read, qkey, u64(nr) * width(a.tensor) * elem(a.tensor));
      else if (!sh.kv_seq && per_key(a.tensor)) add(prog, a.tensor, Dir::read, 0, u64(t.n_k) * d * e);
      else if (!sh.kv_seq) add(prog, a.tensor, Dir::read, qkey, u64(nr) * u64(t.n_k) * e);
    }
    // whole per-key outputs (standard attention's dK, dV) and score matrices without a K/V loop; a
    // K/V head's region (Action::per_kv_head: at::sum's dK, dV) is this head's share of it, keyed
    // apart from the expanded gradient the launch reads (another allocation)
    for (const Action& a : s.actions)
      if (a.op == Op::store && !per_query(a.tensor) && !sh.kv_seq) {
        const u64 bytes = per_key(a.tensor) ? u64(t.n_k) * d * e : u64(nr) * u64(t.n_k) * e;
        if (a.per_kv_head) add(prog, a.tensor, Dir::write, qkey | kKvHeadKey, bytes / u64(p_.group()));
        else add(prog, a.tensor, Dir::write, qkey, bytes);
      }
    end_step(prog);
    // per K/V block j: K_j, V_j, and the (rows, j) piece of S or P
    if (sh.kv_seq)
      for (std::int64_t j = 0; j < t.t_c(); ++j) {
        for (const Action& a : s.actions) {
          if (!moves_data(a)) continue;
          if (per_query(a.tensor)) continue;
          const Dir w = direction(a.op);
          if (per_key(a.tensor)) add(prog, a.tensor, w, u64(j), u64(t.cols(j)) * d * e);
          else add(prog, a.tensor, w, qkey * u64(t.t_c()) + u64(j), u64(nr) * u64(t.cols(j)) * e);
        }
        end_step(prog);
      }
    // end: stores of per-query tensors
    for (const Action& a : s.actions)
      if (a.op == Op::store && per_query(a.tensor)) add(prog, a.tensor, Dir::write, qkey, u64(nr) * width(a.tensor) * elem(a.tensor));
    end_step(prog);
    for (const Access& x : prog) requested_[k][x.tensor][int(x.dir)] += x.bytes;
    if (!truncated_[k]) recorded_[k] += prog.size();
  }
}

void L2Model::on_step(const StepView& s) {
  if (s.skip) return;
  const Shape& sh = shapes_[s.launch];
  const bool whole = std::any_of(s.actions.begin(), s.actions.end(), [](const Action& a) {
    return moves_data(a) && a.region == Region::whole;
  });
  if (whole && !sh.walks_tiles) {
    expand_whole(s);
    return;
  }
  const std::size_t k = s.launch;
  const bool record = !truncated_[k] && recorded_[k] < kRecordBudget;
  if (!record && !truncated_[k]) {
    truncated_[k] = true;
    truncated_at_[k] = s.dispatch;
  }
  auto& progs = programs_[k];
  scratch_.clear();
  if (record && progs.size() <= s.dispatch) progs.resize(std::size_t(s.dispatch) + 1);
  Program& prog = record ? progs[s.dispatch] : scratch_;
  const std::size_t before = prog.size();
  for (const Action& a : s.actions) {
    if (!moves_data(a)) continue;
    const Dir w = direction(a.op);
    const u64 row = u64(row_width(a.tensor, p_.tiling.d)) * u64(tensor_element_bytes(p_, a.tensor));
    // a padded block (Action::padded) is Q block i's B_r rows of the rounded allocation, keyed as i
    const u64 rows = u64(a.padded ? p_.tiling.b_r : p_.tiling.rows(s.i));
    switch (a.region) {
      case Region::q_block:  // a per-split tensor (Oacc, Lacc, dQacc's slices): split s's copy, keyed apart
        // from the other splits'; a tensor with one copy (Q_i, dO_i, L_i, D_i) is the same tile for
        // every split that reads it
        add(prog, a.tensor, w,
            u64((copies(p_, a.tensor) > 1 ? std::max<std::int64_t>(s.split, 0) : 0) * p_.tiling.t_r() + s.i), rows * row);
        break;
      case Region::q_block_splits:
        for (std::int64_t x = 0; x < copies(p_, a.tensor); ++x)
          add(prog, a.tensor, w, u64(x * p_.tiling.t_r() + s.i), rows * row);
        break;
      case Region::kv_block: add(prog, a.tensor, w, u64(s.j), u64(p_.tiling.cols(s.j)) * row); break;
      case Region::whole: expand_in_step(prog, a); break;
      case Region::none: break;
    }
  }
  for (std::size_t x = before; x < prog.size(); ++x) requested_[k][prog[x].tensor][int(prog[x].dir)] += prog[x].bytes;
  if (record) recorded_[k] += prog.size() - before;
  end_step(prog);
}

L2Model::Replayed L2Model::replay_heads(const std::vector<Program>& progs, std::int64_t heads, std::int64_t counted,
                                         double capacity, std::int64_t slot_count, double held_scale) const {
  const std::int64_t blocks = std::int64_t(progs.size());
  Lru lru(capacity, std::size_t(heads));
  // The (batch, K/V head) whose K and V the replayed pair r reads: pairs are dispatched head
  // fastest (r = batch * heads + head), and query head h reads K/V head h / group (GQA).
  const auto kv_owner = [&](std::uint32_t r) {
    const std::int64_t b = std::int64_t(r) / p_.heads, h = std::int64_t(r) % p_.heads;
    return std::uint32_t(b * p_.kv_heads + h / p_.group());
  };
  struct Slot {
    std::uint32_t head = 0, block = 0;
    std::size_t pos = 0;
    bool active = false;
  };
  const std::int64_t total = heads * blocks;
  std::vector<Slot> slots(std::size_t(std::min<std::int64_t>(slot_count, total)));
  std::int64_t next = 0;
  auto take = [&](Slot& s) {
    while (next < total) {
      const std::int64_t g = next++;
      s = Slot{std::uint32_t(g / blocks), std::uint32_t(g % blocks), 0, true};
      if (!progs[std::size_t(s.block)].empty()) return;
    }
    s.active = false;
  };
  for (Slot& s : slots) take(s);
  std::vector<TensorBytes> requests(static_cast<std::size_t>(heads));
  for (bool any = true; any;) {
    any = false;
    for (Slot& s : slots) {
      if (!s.active) continue;
      any = true;
      const Program& pr = progs[s.block];
      for (;;) {
        const Access& a = pr[s.pos++];
        // K and V are shared by the query heads of a group (GQA); their gradients are per query head
        const bool shared = a.tensor == std::uint8_t(Tensor::K) || a.tensor == std::uint8_t(Tensor::V);
        lru.access(s.head, shared ? kv_owner(s.head) : s.head, a.tensor, a.key, a.bytes, a.dir);
        requests[s.head][a.tensor][int(a.dir)] += a.bytes;
        if (a.end_of_step || s.pos == pr.size()) break;
      }
      if (s.pos == pr.size()) take(s);
    }
  }
  // Sum the counted heads (scale_to_all scales them to all batch * heads). The dirty bytes left at
  // the end belong to the last heads, which every replay has: they are not scaled.
  const std::vector<TensorBytes> left = lru.dirty(std::size_t(heads)), early = held_scale > 0 ? lru.written_early(std::size_t(heads), held_scale) : std::vector<TensorBytes>(std::size_t(heads));
  Replayed out;
  TensorBytes &dram = out.dram, &req = out.requests, &dirty = out.dirty;
  for (std::int64_t h = 0; h < heads; ++h)
    for (int x = 0; x < kTensorCount; ++x)
      for (int d = 0; d < kDirCount; ++d) {
        if (h < counted) {
          dram[x][d] += lru.dram()[std::size_t(h)][x][d];
          req[x][d] += requests[std::size_t(h)][x][d];
        }
        dirty[x][d] += left[std::size_t(h)][x][d];
        out.early[x][d] += early[std::size_t(h)][x][d];
      }
  return out;
}

L2Launch L2Model::replay_launch(std::size_t k) const {
  const Launch& l = s_->launches[k];
  std::vector<Program> kept;
  const bool cut = truncated_[k];
  if (cut) {  // the first thread blocks, whole: the one the recording stopped in is dropped
    kept.assign(programs_[k].begin(), programs_[k].begin() + std::min<std::size_t>(truncated_at_[k], programs_[k].size()));
    if (kept.empty()) kept.push_back(programs_[k].front());
  }
  const auto& progs = cut ? kept : programs_[k];
  L2Launch out;
  const Occupancy occ = launch_occupancy(p_, l);
  out.slots = occ.slots;
  const std::int64_t bh = p_.bh(), blocks = std::int64_t(progs.size());
  if (blocks == 0) return out;
  u64 per_head = 0;
  for (const Program& pr : progs) per_head += pr.size();
  const ReplaySample r = replay_sample(p_, occ.slots, blocks, per_head);
  out.heads_replayed = r.heads;
  out.capacity_bytes = r.capacity;
  // the launch holds its bh pairs' bytes in the whole L2; the replay held r.heads pairs' in r.capacity
  const double held_scale =
      shapes_[k].early_write_back ? double(bh) / double(r.heads) * r.capacity / double(p_.gpu.l2_bytes) : 0;
  Replayed x = replay_heads(progs, r.heads, r.counted, r.capacity, occ.slots, held_scale);
  if (cut) extrapolate_cut(x.dram, x.requests, requested_[k], r.counted);
  scale_to_all(out, x.dram, x.requests, x.dirty, x.early, held_scale > 0, r.counted, bh, blocks, occ.slots);
  return out;
}

const std::vector<L2Launch>& L2Model::replay() const {
  if (!replayed_) {
    for (std::size_t k = 0; k < programs_.size(); ++k) result_.push_back(replay_launch(k));
    replayed_ = true;
  }
  return result_;
}

void L2Model::add_levels(Counters& c, bool finished) const {
  if (!finished) return;
  const std::vector<L2Launch>& r = replay();
  for (std::size_t k = 0; k < r.size(); ++k) {
    c.launches[k].l2 = r[k].requests;
    c.launches[k].dram = r[k].dram;
    c.launches[k].l2_dirty_at_end = r[k].dirty_at_end;
    for (int x = 0; x < kTensorCount; ++x)
      for (int d = 0; d < kDirCount; ++d) {
        c.levels[int(Memory::l2)][x][d] += r[k].requests[x][d];
        c.levels[int(Memory::dram)][x][d] += r[k].dram[x][d];
      }
  }
  c.l2 = true;
}

}  // namespace flashlab
