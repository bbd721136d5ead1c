// sector_counter.cpp — the walk's loads and stores in 32-byte sectors (sector_counter.hpp).
#include "flashlab/executor/sector_counter.hpp"

#include "flashlab/executor/action_cost.hpp"  // direction
#include "flashlab/schedule/tensor_shape.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace flashlab {
namespace {

using u64 = std::uint64_t;

constexpr u64 kSector = 32;
constexpr u64 kChunk = 16;             // bytes one thread moves per access (e_in tensors)
constexpr u64 kWarp = 32;              // threads per warp request
constexpr u64 kStatBytes = 4;          // fp32 statistics: one row per thread

// A run of n bytes starting at a (mod 32), moved in requests of `request` bytes (a multiple of
// 32) from its start: every request starts at a mod 32.
u64 run(u64 a, u64 n, u64 request) { return (n / request) * sector_bytes(a, request) + sector_bytes(a, n % request); }

u64 round_up(u64 v, u64 m) { return (v + m - 1) / m * m; }

}  // namespace

u64 sector_bytes(u64 a, u64 n) { return n == 0 ? 0 : ((a + n + kSector - 1) / kSector - a / kSector) * kSector; }

SectorCounter::SectorCounter(const Problem& p, const Schedule& s) : p_(p) {
  const Tiling& t = p.tiling;
  const u64 e = u64(p.e_in), d = u64(t.d), bh = u64(p.bh());
  // k * stride mod 32 for k in [0, count): periodic, at most 32 residues.
  auto residues = [](u64 count, u64 stride) {
    Residues out;
    const u64 step = stride % kSector, period = step == 0 ? 1 : kSector / std::gcd(step, kSector);
    for (u64 k = 0; k < period && k < count; ++k)
      out.emplace_back(k * step % kSector, count / period + (k < count % period ? 1 : 0));
    return out;
  };
  // tensors that some action moves in padded blocks (Action::padded): allocated with T_r B_r rows
  u64 gather_rows = 0;  // Action::request_rows of the actions that set it (one value)
  const auto note = [&](const std::vector<Action>& acts) {
    for (const Action& a : acts) {
      if (a.padded && a.tensor != Tensor::none) padded_[int(a.tensor)] = true;
      if (a.request_rows == 0) continue;
      if (gather_rows != 0 && gather_rows != a.request_rows)
        throw std::logic_error("SectorCounter: one Action::request_rows per schedule");
      gather_rows = a.request_rows;
    }
  };
  for (const Launch& l : s.launches) {
    for (const auto& step : l.prologue) note(step);
    for (const auto* acts : {&l.outer_begin, &l.body, &l.outer_end}) note(*acts);
  }
  const auto n_q_of = [&](Tensor x) { return u64(padded_[int(x)] ? t.t_r() * t.b_r : t.n_q); };
  query_ = {d * e, kWarp * kChunk, residues(bh, u64(t.n_q) * d * e)};
  key_ = {d * e, kWarp * kChunk, residues(bh, u64(t.n_k) * d * e)};
  query32_ = {d * 4, kWarp * kChunk, residues(bh, u64(t.n_q) * d * 4)};
  stats_ = {kStatBytes, kWarp * kStatBytes, residues(bh, u64(t.n_q) * kStatBytes)};
  padded_stats_ = {kStatBytes, kWarp * kStatBytes, residues(bh, n_q_of(Tensor::D) * kStatBytes)};
  gathered_stats_ = {kStatBytes, std::max<u64>(1, gather_rows) * kStatBytes, stats_.heads};
  gathered_padded_stats_ = {kStatBytes, std::max<u64>(1, gather_rows) * kStatBytes, padded_stats_.heads};
  launch_bytes_.assign(s.launches.size(), TensorBytes{});
  // split s's copies: the bh slices from s bh on, each n_q rows
  const auto split_layout = [&](u64 row, u64 request, std::int64_t s, u64 n_q) {
    Residues r = residues(bh, n_q * row);
    for (auto& [res, count] : r) res = (res + u64(s) * bh * n_q * row) % kSector;
    return Layout{row, request, std::move(r)};
  };
  for (std::int64_t s = 0; s < p.splits; ++s) {
    oacc_.push_back(split_layout(d * 4, kWarp * kChunk, s, u64(t.n_q)));
    lacc_.push_back(split_layout(kStatBytes, kWarp * kStatBytes, s, u64(t.n_q)));
  }
  // the deterministic backward's slices of dQacc, split-major as FA2's (nsplits, b, N_q, h, d)
  for (std::int64_t s = 0; s < p.dq_splits; ++s)
    dqacc_.push_back(split_layout(d * 4, kWarp * kChunk, s, n_q_of(Tensor::dQacc)));
  for (const Launch& l : s.launches) {
    Shape sh;
    sh.blocks = u64(blocks_per_head(l, p));
    for (const Loop& x : l.loops) {
      if (x.thread_block && (x.dim == Dim::q_block || x.dim == Dim::q_row) && sh.split == Dim::batch) sh.split = x.dim;
      if (!x.thread_block && x.dim == Dim::kv_block) sh.kv_tiles = true;
    }
    shapes_.push_back(sh);
  }
  // Whole-tensor actions split by Q block or by row: the start of every full block or row.
  full_q_blocks_ = residues(u64(t.t_r() - 1), u64(t.b_r));
  full_kv_blocks_ = residues(u64(t.t_c() - 1), u64(t.b_c));
  all_q_rows_ = residues(u64(t.n_q), 1);
}

const SectorCounter::Layout& SectorCounter::layout(Tensor t, std::int64_t s, bool gathered) const {
  if (t == Tensor::Oacc) return oacc_[std::size_t(s)];
  if (t == Tensor::Lacc) return lacc_[std::size_t(s)];
  if (t == Tensor::dQacc) return dqacc_[std::size_t(s)];
  if (per_key(t)) return key_;
  if (is_stat(t) && gathered) return padded_[int(t)] ? gathered_padded_stats_ : gathered_stats_;
  if (is_stat(t)) return padded_[int(t)] ? padded_stats_ : stats_;
  return tensor_shape(t).fp32 ? query32_ : query_;
}

u64 SectorCounter::rows(const Layout& l, u64 start, u64 n_rows) const {
  if (start == l.last_start && n_rows == l.last_rows) return l.last_bytes;
  u64 b = 0;
  for (const auto& [head, count] : l.heads) b += count * run((head + start) % kSector, n_rows * l.row, l.request);
  l.last_start = start;
  l.last_rows = n_rows;
  l.last_bytes = b;
  return b;
}

u64 SectorCounter::rows(const Layout& l, const Residues& starts, u64 n_rows) const {
  // `starts` are in rows: row r starts r * l.row bytes in.
  u64 b = 0;
  for (const auto& [r, count] : starts) b += count * rows(l, r * l.row % kSector, n_rows);
  return b;
}

u64 SectorCounter::rows_at(Tensor t, std::int64_t first, std::int64_t n_rows, std::int64_t s, bool gathered) const {
  const Layout& l = layout(t, s, gathered);
  return rows(l, u64(first) * l.row % kSector, u64(n_rows));
}

u64 SectorCounter::score_row(u64 col0, u64 cols) const {
  const u64 e = u64(p_.e_in);
  return sector_bytes(col0 * e % kSector, round_up(cols * e, kChunk));
}

u64 SectorCounter::whole(const Shape& s, Tensor t) const {
  const Tiling& tl = p_.tiling;
  if (score_matrix(t)) {
    u64 per_row = 0;
    if (s.kv_tiles)
      for (std::int64_t j = 0; j < tl.t_c(); ++j) per_row += score_row(u64(j * tl.b_c), u64(tl.cols(j)));
    else
      per_row = score_row(0, u64(tl.n_k));
    return per_row * u64(tl.n_q) * u64(p_.bh());
  }
  if (per_key(t)) {
    const u64 once = s.kv_tiles ? rows(key_, full_kv_blocks_, u64(tl.b_c)) + rows_at(t, (tl.t_c() - 1) * tl.b_c, tl.cols(tl.t_c() - 1))
                                : rows(key_, 0, u64(tl.n_k));
    return s.blocks * once;
  }
  const Layout& l = layout(t);
  switch (s.split) {
    case Dim::q_block:
      return rows(l, full_q_blocks_, u64(tl.b_r)) + rows_at(t, (tl.t_r() - 1) * tl.b_r, tl.rows(tl.t_r() - 1));
    case Dim::q_row: return rows(l, all_q_rows_, 1);
    default: return rows(l, 0, u64(tl.n_q));
  }
}

void SectorCounter::on_step(const StepView& s) {
  const Tiling& t = p_.tiling;
  for (const Action& a : s.actions) {
    if (a.op != Op::load && a.op != Op::store && a.op != Op::atomic) continue;
    u64 b = 0;
    // a padded block or a TMA box (Action::padded, Action::tma_box): B_r rows (B_c), the last one too
    const std::int64_t rows = a.padded || a.tma_box ? t.b_r : t.rows(s.i);
    const std::int64_t cols = a.tma_box ? t.b_c : t.cols(s.j);
    switch (a.region) {
      case Region::q_block:
        b = rows_at(a.tensor, s.i * t.b_r, rows, std::max<std::int64_t>(s.split, 0), a.request_rows != 0);
        break;
      case Region::q_block_splits:
        for (std::int64_t x = 0; x < copies(p_, a.tensor); ++x) b += rows_at(a.tensor, s.i * t.b_r, rows, x);
        break;
      case Region::kv_block: b = rows_at(a.tensor, s.j * t.b_c, cols); break;
      case Region::whole: b = whole(shapes_[s.launch], a.tensor); break;
      case Region::none: break;
    }
    if (a.per_kv_head) b /= u64(p_.group());  // the K/V heads' regions, as the query heads' share
    const u64 moved = b * u64(a.requests);  // each request its sectors
    bytes_[int(a.tensor)][int(direction(a.op))] += moved;
    launch_bytes_[s.launch][int(a.tensor)][int(direction(a.op))] += moved;
  }
}

void SectorCounter::add_levels(Counters& c, bool) const {
  c.levels[int(Memory::sector)] = bytes_;
  c.sectors = true;
}

}  // namespace flashlab
