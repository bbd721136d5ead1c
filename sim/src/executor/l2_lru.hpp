// l2_lru.hpp — the L2 model's cache (l2_model.hpp's rules): a fully associative LRU over tiles with
// write-back, and the early write-back of V3's launches. Private to sim/src/executor (l2_model.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "flashlab/executor/counters.hpp"
#include "flashlab/executor/l2_model.hpp"

namespace flashlab::l2_detail {

using u64 = std::uint64_t;
inline constexpr u64 kSector = 32;

// A fully associative LRU over tiles with write-back, bytes counted per head and tensor. A tile is
// named by its tensor, the (batch, head) whose copy it is (`owner`: a K/V head shared by a group of
// query heads under GQA) and its key; the DRAM bytes of a miss go to the head that missed.
class Lru {
 public:
  Lru(double capacity, std::size_t heads) : capacity_(capacity), dram_(heads) {}

  void access(std::uint32_t head, std::uint32_t owner, std::uint8_t tensor, std::uint32_t key, std::uint32_t bytes,
              Dir dir) {
    const bool write = dir == Dir::write;  // a store: no DRAM read; a load or an atomic reads a miss
    // 5 bits of tensor (kTensorCount <= 32), 27 of owner (a replayed (batch, head) pair), 32 of key
    static_assert(kTensorCount <= 32);
    const u64 id = (u64(tensor) << 59) | (u64(owner & ((1u << 27) - 1)) << 32) | key;
    auto [it, fresh] = index_.try_emplace(id, 0u);
    std::uint32_t n;
    if (fresh) {
      n = alloc();
      it->second = n;
      Node& x = nodes_[n];
      x = Node{};
      x.id = id;
      x.bytes = bytes;
      x.head = head;
      x.tensor = tensor;
      used_ += bytes;
      if (!write) dram_[head][tensor][0] += bytes;
    } else {
      n = it->second;
      unlink(n);
      Node& x = nodes_[n];
      if (bytes > x.bytes) {  // a larger access of the same tile: the rest comes from DRAM
        used_ += bytes - x.bytes;
        if (!write) dram_[head][tensor][0] += bytes - x.bytes;
        x.bytes = bytes;
      }
    }
    if (dir != Dir::read) nodes_[n].dirty = true;
    if (dir != Dir::write && nodes_[n].reads < 64) ++nodes_[n].reads;
    push_front(n);
    while (double(used_) > capacity_ && tail_ != kNone) evict(tail_);
  }

  // Dirty bytes still held, per head and tensor (written back after the launch ends).
  std::vector<TensorBytes> dirty(std::size_t heads) const {
    std::vector<TensorBytes> out(heads);
    for (std::uint32_t n = head_; n != kNone; n = nodes_[n].next)
      if (nodes_[n].dirty) out[nodes_[n].head][nodes_[n].tensor][1] += nodes_[n].bytes;
    return out;
  }

  // Of the dirty bytes still held, per head and tensor, those that left the L2 during the launch
  // (l2_model.hpp, "early write-back"): with f the mean over x in [0, 1] of
  // P(Poisson(A x H / (c capacity)) >= A), H the bytes the launch holds (held(), times `scale`: the
  // launch's held bytes over the replay's, the capacity's share included), a fraction f of every
  // byte stored leaves during the launch — or what the LRU evicted, where that is more: of the
  // bytes still dirty, f of all stored less those evicted, in whole sectors.
  std::vector<TensorBytes> written_early(std::size_t heads, double scale) const {
    constexpr int kSteps = 100;  // x's midpoints
    const double h = held() * scale / (kWriteBack.usable * capacity_);
    double f = 0;
    for (int i = 0; i < kSteps; ++i) f += poisson_at_least(kWriteBack.ways * (i + 0.5) / kSteps * h, kWriteBack.ways);
    f /= kSteps;
    std::vector<TensorBytes> out = dirty(heads);
    for (std::size_t x = 0; x < heads; ++x)
      for (int t = 0; t < kTensorCount; ++t) {
        u64& still = out[x][t][1];
        const u64 evicted = dram_[x][t][1];
        const u64 due = u64(std::llround(f * double((still + evicted) / kSector))) * kSector;
        still = std::min(still, due > evicted ? due - evicted : 0);
      }
    return out;
  }

  // The bytes the L2 held over the launch: each tile once per stay (from its first access to its
  // eviction or the end), a tile loaded by r thread blocks as 2 - 0.5^r copies (each partition
  // keeps a copy of a line read from its side: docs/model.md "The two partitions, measured alone"),
  // a tile only stored as one.
  double held() const {
    double out = evicted_held_;
    for (std::uint32_t n = head_; n != kNone; n = nodes_[n].next) out += held_bytes(nodes_[n]);
    return out;
  }

  const std::vector<TensorBytes>& dram() const { return dram_; }

 private:
  // P(Poisson(lambda) >= a).
  static double poisson_at_least(double lambda, int a) {
    double term = std::exp(-lambda), below = 0;
    for (int i = 0; i < a; ++i) {
      below += term;
      term *= lambda / double(i + 1);
    }
    return std::max(0.0, 1.0 - below);
  }

  static constexpr std::uint32_t kNone = ~0u;
  struct Node {
    u64 id = 0;
    std::uint32_t prev = kNone, next = kNone, bytes = 0, head = 0;
    std::uint8_t tensor = 0, reads = 0;  // reads: loads and atomics of the tile, at most 64
    bool dirty = false;
  };
  static double held_bytes(const Node& x) {
    return double(x.bytes) * (x.reads == 0 ? 1.0 : 2.0 - std::ldexp(1.0, -int(x.reads)));
  }

  std::uint32_t alloc() {
    if (!free_.empty()) {
      const std::uint32_t n = free_.back();
      free_.pop_back();
      return n;
    }
    nodes_.emplace_back();
    return std::uint32_t(nodes_.size() - 1);
  }
  void unlink(std::uint32_t n) {
    Node& x = nodes_[n];
    (x.prev == kNone ? head_ : nodes_[x.prev].next) = x.next;
    (x.next == kNone ? tail_ : nodes_[x.next].prev) = x.prev;
    x.prev = x.next = kNone;
  }
  void push_front(std::uint32_t n) {
    Node& x = nodes_[n];
    x.prev = kNone;
    x.next = head_;
    if (head_ != kNone) nodes_[head_].prev = n;
    head_ = n;
    if (tail_ == kNone) tail_ = n;
  }
  void evict(std::uint32_t n) {
    Node& x = nodes_[n];
    if (x.dirty) dram_[x.head][x.tensor][1] += x.bytes;
    evicted_held_ += held_bytes(x);
    used_ -= x.bytes;
    index_.erase(x.id);
    unlink(n);
    free_.push_back(n);
  }

  double capacity_, evicted_held_ = 0;
  u64 used_ = 0;
  std::uint32_t head_ = kNone, tail_ = kNone;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> free_;
  std::unordered_map<u64, std::uint32_t> index_;
  std::vector<TensorBytes> dram_;
};

}  // namespace flashlab::l2_detail
