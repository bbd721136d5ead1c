// hw_bytes.cpp — the kernels' global-memory bytes at sector granularity (hw_bytes.hpp).
#include "hw_bytes.hpp"

#include "flashlab/contract/tiling.hpp"

namespace flashlab::gpu {
namespace {

using u64 = std::uint64_t;

// fp32 rows [row0, row0 + n) of a (bh * N_q) vector, moved by consecutive threads (one row
// each): a warp request covers 32 rows starting at row0 + 32c.
u64 stat_rows_bytes(u64 row0, u64 n) {
  u64 b = 0;
  for (u64 c = 0; c < n; c += 32) b += sector_bytes((row0 + c) * 4, (n - c < 32 ? n - c : 32) * 4);
  return b;
}

void add(TensorBytes& b, Tensor t, bool write, u64 bytes) { b[int(t)][write ? 1 : 0] += bytes; }

TensorBytes v2_bytes(const Problem& p) {
  const Tiling& t = p.tiling;
  const u64 e = u64(p.e_in), row = u64(t.d) * e;
  TensorBytes b{};
  for (std::int64_t bh = 0; bh < p.bh(); ++bh)
    for (std::int64_t i = 0; i < t.t_r(); ++i) {
      const u64 rows = u64(t.rows(i));
      const BlockRange r = p.block_skip ? visible_col_blocks(t, p.band, i) : BlockRange{0, t.t_c() - 1};
      if (!r.empty()) add(b, Tensor::Q, false, rows * row);
      for (std::int64_t j = r.first; j <= r.last; ++j) {
        add(b, Tensor::K, false, u64(t.cols(j)) * row);
        add(b, Tensor::V, false, u64(t.cols(j)) * row);
      }
      add(b, Tensor::O, true, rows * row);
      add(b, Tensor::L, true, stat_rows_bytes(u64(bh * t.n_q + i * t.b_r), rows));
    }
  return b;
}

TensorBytes v1_bytes(const Problem& p) {
  const Tiling& t = p.tiling;
  const u64 e = u64(p.e_in), row = u64(t.d) * e;
  TensorBytes b{};
  for (std::int64_t bh = 0; bh < p.bh(); ++bh) {
    const u64 head_row0 = u64(bh * t.n_q);
    add(b, Tensor::O, true, u64(t.n_q) * row);  // line 2
    add(b, Tensor::l, true, stat_rows_bytes(head_row0, u64(t.n_q)));
    add(b, Tensor::m, true, stat_rows_bytes(head_row0, u64(t.n_q)));
    for (std::int64_t j = 0; j < t.t_c(); ++j) {
      const BlockRange r = p.block_skip ? visible_row_blocks(t, p.band, j) : BlockRange{0, t.t_r() - 1};
      if (r.empty()) continue;
      add(b, Tensor::K, false, u64(t.cols(j)) * row);
      add(b, Tensor::V, false, u64(t.cols(j)) * row);
      for (std::int64_t i = r.first; i <= r.last; ++i) {
        const u64 rows = u64(t.rows(i)), stats = stat_rows_bytes(head_row0 + u64(i * t.b_r), rows);
        add(b, Tensor::Q, false, rows * row);
        for (bool write : {false, true}) {
          add(b, Tensor::O, write, rows * row);
          add(b, Tensor::l, write, stats);
          add(b, Tensor::m, write, stats);
        }
      }
    }
  }
  return b;
}

TensorBytes standard_bytes(const Problem& p) {
  const Tiling& t = p.tiling;
  const u64 e = u64(p.e_in), row = u64(t.d) * e, rows = u64(t.n_q) * u64(p.bh());
  // One row of S or P: tile j moves round_up(cols(j), 8) elements from a sector-aligned start
  // (j B_c e is a multiple of 32 bytes); the softmax moves round_up(N_k, 8) elements at once.
  u64 tiled_row = 0;
  for (std::int64_t j = 0; j < t.t_c(); ++j) tiled_row += sector_bytes(0, u64((t.cols(j) + 7) / 8 * 8) * e);
  const u64 whole_row = sector_bytes(0, u64((t.n_k + 7) / 8 * 8) * e);
  const u64 kv = u64(t.n_k) * row * u64(t.t_r()) * u64(p.bh());  // K (or V) streamed per Q block
  TensorBytes b{};
  add(b, Tensor::Q, false, rows * row);
  add(b, Tensor::K, false, kv);
  add(b, Tensor::S, true, rows * tiled_row);
  add(b, Tensor::S, false, rows * whole_row);
  add(b, Tensor::P, true, rows * whole_row);
  add(b, Tensor::P, false, rows * tiled_row);
  add(b, Tensor::V, false, kv);
  add(b, Tensor::O, true, rows * row);
  return b;
}

std::string reason(const Problem& p, Tensor t) {
  switch (t) {
    case Tensor::K: case Tensor::V:
      return std::string("each of the T_r = ") + std::to_string(p.tiling.t_r()) + " thread blocks of the " +
             (t == Tensor::K ? "S = Q K^T" : "O = P V") +
             " kernel streams it through SRAM; Algorithm 0 reads it once (DRAM bytes stay near that: L2 "
             "serves the re-reads)";
    case Tensor::S: case Tensor::P:
      return "each row of N_k elements is moved in whole 32-byte sectors (rows padded to 16 elements)";
    case Tensor::l: case Tensor::m: case Tensor::L:
      return "fp32 rows moved 32 per warp request; a run that starts or ends inside a 32-byte sector "
             "counts the whole sector";
    default: return "not expected: the kernels move these rows exactly";
  }
}

}  // namespace

u64 sector_bytes(u64 a, u64 n) { return n == 0 ? 0 : ((a + n + 31) / 32 - a / 32) * 32; }

TensorBytes kernel_bytes(const Problem& p) {
  switch (p.algo) {
    case Algo::standard: return standard_bytes(p);
    case Algo::v1: return v1_bytes(p);
    case Algo::v2: return v2_bytes(p);
  }
  return {};
}

std::vector<ByteDifference> explain_differences(const Problem& p, const TensorBytes& sim, const TensorBytes& kernel) {
  std::vector<ByteDifference> out;
  for (int x = 0; x < kTensorCount; ++x)
    for (int w = 0; w < 2; ++w)
      if (sim[x][w] != kernel[x][w])
        out.push_back({Tensor(x), w == 1, sim[x][w], kernel[x][w], reason(p, Tensor(x))});
  return out;
}

u64 total(const TensorBytes& b, bool write) {
  u64 s = 0;
  for (const auto& t : b) s += t[write ? 1 : 0];
  return s;
}

}  // namespace flashlab::gpu
