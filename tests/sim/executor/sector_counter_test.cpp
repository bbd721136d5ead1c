// The sector level (sector_counter.hpp) against a brute force: the kernels' loop nests written
// out here, every warp request cut from its run byte by byte and the distinct 32-byte sectors
// of each request counted. Configs are ragged, with several (batch, head) pairs and row sizes
// that are not multiples of 32 bytes, so that runs start inside sectors.
#include <doctest/doctest.h>

#include <set>

#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/executor/sector_counter.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "../../common/config_helpers.hpp"

using namespace flashlab;

namespace {

using u64 = std::uint64_t;

// Sectors of the requests of `request` bytes that move [a, a + n), from a.
u64 brute(u64 a, u64 n, u64 request) {
  u64 sectors = 0;
  for (u64 from = 0; from < n; from += request) {
    std::set<u64> touched;
    for (u64 x = a + from; x < a + std::min(n, from + request); ++x) touched.insert(x / 32);
    sectors += 32 * touched.size();
  }
  return sectors;
}

struct Brute {
  const Problem& p;
  TensorBytes b{};
  u64 e() const { return u64(p.e_in); }
  u64 row() const { return u64(p.tiling.d) * e(); }
  // rows [r0, r0 + n) of head bh of a tensor with n_rows rows
  void rows(Tensor t, bool write, u64 bh, u64 n_rows, u64 r0, u64 n) {
    const bool stat = t == Tensor::l || t == Tensor::m || t == Tensor::L;
    const u64 w = stat ? 4 : row();
    b[int(t)][write] += brute((bh * n_rows + r0) * w, n * w, stat ? 128 : 512);
  }
};

TensorBytes brute_v2(const Problem& p) {
  const Tiling& t = p.tiling;
  Brute x{p};
  for (u64 bh = 0; bh < u64(p.bh()); ++bh)
    for (std::int64_t i = 0; i < t.t_r(); ++i) {
      const BlockRange r = p.block_skip ? visible_col_blocks(t, p.band, i) : BlockRange{0, t.t_c() - 1};
      if (!r.empty()) x.rows(Tensor::Q, false, bh, u64(t.n_q), u64(i * t.b_r), u64(t.rows(i)));
      for (std::int64_t j = r.first; j <= r.last; ++j)
        for (Tensor kv : {Tensor::K, Tensor::V}) x.rows(kv, false, bh, u64(t.n_k), u64(j * t.b_c), u64(t.cols(j)));
      x.rows(Tensor::O, true, bh, u64(t.n_q), u64(i * t.b_r), u64(t.rows(i)));
      x.rows(Tensor::L, true, bh, u64(t.n_q), u64(i * t.b_r), u64(t.rows(i)));
    }
  return x.b;
}

TensorBytes brute_v1(const Problem& p) {
  const Tiling& t = p.tiling;
  Brute x{p};
  for (u64 bh = 0; bh < u64(p.bh()); ++bh) {
    for (Tensor s : {Tensor::O, Tensor::l, Tensor::m}) x.rows(s, true, bh, u64(t.n_q), 0, u64(t.n_q));  // line 2
    for (std::int64_t j = 0; j < t.t_c(); ++j) {
      const BlockRange r = p.block_skip ? visible_row_blocks(t, p.band, j) : BlockRange{0, t.t_r() - 1};
      if (r.empty()) continue;
      for (Tensor kv : {Tensor::K, Tensor::V}) x.rows(kv, false, bh, u64(t.n_k), u64(j * t.b_c), u64(t.cols(j)));
      for (std::int64_t i = r.first; i <= r.last; ++i) {
        x.rows(Tensor::Q, false, bh, u64(t.n_q), u64(i * t.b_r), u64(t.rows(i)));
        for (bool write : {false, true})
          for (Tensor s : {Tensor::O, Tensor::l, Tensor::m}) x.rows(s, write, bh, u64(t.n_q), u64(i * t.b_r), u64(t.rows(i)));
      }
    }
  }
  return x.b;
}

// kernels/src/standard.cu: S = QK^T and O = PV, one thread block per Q block streaming K_j (V_j)
// and storing (loading) S_ij (P_ij) a row piece at a time; the softmax, one block per row.
TensorBytes brute_standard(const Problem& p) {
  const Tiling& t = p.tiling;
  Brute x{p};
  const u64 e = x.e(), ld = u64((t.n_k + 15) / 16 * 16);
  auto piece = [&](u64 bh, u64 r, u64 c0, u64 cols) { return brute(((bh * u64(t.n_q) + r) * ld + c0) * e, (cols * e + 15) / 16 * 16, 1 << 20); };
  for (u64 bh = 0; bh < u64(p.bh()); ++bh)
    for (std::int64_t i = 0; i < t.t_r(); ++i) {
      x.rows(Tensor::Q, false, bh, u64(t.n_q), u64(i * t.b_r), u64(t.rows(i)));
      x.rows(Tensor::O, true, bh, u64(t.n_q), u64(i * t.b_r), u64(t.rows(i)));
      for (std::int64_t j = 0; j < t.t_c(); ++j) {
        for (Tensor kv : {Tensor::K, Tensor::V}) x.rows(kv, false, bh, u64(t.n_k), u64(j * t.b_c), u64(t.cols(j)));
        for (std::int64_t r = i * t.b_r; r < i * t.b_r + t.rows(i); ++r) {
          const u64 b = piece(bh, u64(r), u64(j * t.b_c), u64(t.cols(j)));
          x.b[int(Tensor::S)][1] += b;
          x.b[int(Tensor::P)][0] += b;
        }
      }
      for (std::int64_t r = i * t.b_r; r < i * t.b_r + t.rows(i); ++r) {
        const u64 b = piece(bh, u64(r), 0, u64(t.n_k));
        x.b[int(Tensor::S)][0] += b;
        x.b[int(Tensor::P)][1] += b;
      }
    }
  return x.b;
}

Problem problem(Algo a, std::int64_t n_q, std::int64_t n_k, std::int64_t d, std::int64_t b_r, std::int64_t b_c,
                Mask m, std::int64_t batch, std::int64_t heads, bool skip) {
  Config c = test::small(a, n_q, n_k, d, b_r, b_c, m);
  c.batch = batch;
  c.heads = heads;
  if (a != Algo::standard) c.block_skip = skip;  // standard attention takes no block skip (resolve refuses it)
  return resolve(c);
}

}  // namespace

TEST_CASE("sector_bytes rounds a contiguous access out to 32-byte sectors") {
  CHECK(sector_bytes(0, 0) == 0);
  CHECK(sector_bytes(0, 32) == 32);
  CHECK(sector_bytes(4, 32) == 64);  // straddles two sectors
  CHECK(sector_bytes(28, 4) == 32);
  CHECK(sector_bytes(30, 4) == 64);
  CHECK(sector_bytes(96, 128) == 128);
}

TEST_CASE("the sector level equals a byte-by-byte brute force of the kernels' requests") {
  const Mask none{}, causal{MaskKind::causal_tl, 0, 0}, causal_br{MaskKind::causal_br, 0, 0},
      window{MaskKind::window, 9, 4};
  // d = 24 fp16: 48-byte rows; d = 64: 128-byte rows. N_q = 37: L rows of head h start at 148 h.
  for (std::int64_t d : {24, 64})
    for (const Mask& m : {none, causal, causal_br, window})
      for (bool skip : {false, true}) {
        CAPTURE(d);
        CAPTURE(to_string(m));
        CAPTURE(skip);
        const Problem v2 = problem(Algo::v2, 37, 29, d, 16, 8, m, 2, 3, skip);
        CHECK(count(v2, true).levels[int(Memory::sector)] == brute_v2(v2));
        const Problem v1 = problem(Algo::v1, 37, 29, d, 16, 8, m, 3, 1, skip);
        CHECK(count(v1, true).levels[int(Memory::sector)] == brute_v1(v1));
      }
  for (std::int64_t d : {24, 64}) {
    CAPTURE(d);
    const Problem s = problem(Algo::standard, 37, 29, d, 16, 8, none, 1, 3, false);
    CHECK(count(s, true).levels[int(Memory::sector)] == brute_standard(s));
  }
}

TEST_CASE("the sector level is only counted when asked for, the others follow where tiles live") {
  Config c;  // V2, N = 1024, d = 64, 128 x 128 tiles, fp16
  const Problem p = resolve(c);
  const Counters plain = count(p), with = count(p, true);
  CHECK_FALSE(plain.sectors);
  CHECK(with.sectors);
  CHECK(plain.levels[int(Memory::sector)] == TensorBytes{});
  CHECK(plain.levels[int(Memory::hbm)] == plain.cost.hbm);
  // V2: K_j, V_j, Q_i land in SRAM; O_i and L_i are stored from registers
  CHECK(plain.bytes(Memory::sram, Tensor::K, Dir::write) == plain.cost.bytes(Tensor::K, Dir::read));
  CHECK(plain.bytes(Memory::sram, Tensor::Q, Dir::write) == plain.cost.bytes(Tensor::Q, Dir::read));
  CHECK(plain.bytes(Memory::registers, Tensor::O, Dir::read) == plain.cost.bytes(Tensor::O, Dir::write));
  CHECK(plain.bytes(Memory::registers, Tensor::L, Dir::read) == plain.cost.bytes(Tensor::L, Dir::write));
  CHECK(total(plain.levels[int(Memory::sram)], Dir::read) == 0);
  // V1: O_i, l_i, m_i go through registers both ways
  c.algo = Algo::v1;
  const Counters v1 = count(resolve(c));
  for (Tensor t : {Tensor::O, Tensor::l, Tensor::m}) {
    CHECK(v1.bytes(Memory::registers, t, Dir::write) == v1.cost.bytes(t, Dir::read));
    CHECK(v1.bytes(Memory::registers, t, Dir::read) == v1.cost.bytes(t, Dir::write));
    CHECK(v1.bytes(Memory::sram, t, Dir::read) == 0);
  }
}
