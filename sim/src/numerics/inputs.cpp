// inputs.cpp — the input matrices Q, K, V of numerics mode (fills, seeding, rounding to the dtype).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/numerics.hpp"

namespace flashlab {
namespace {

// splitmix64: decorrelates the per-matrix seeds (seed, 0), (seed, 1), (seed, 2).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// N(0, 1) by Box-Muller on mt19937_64 (both fully specified, unlike std::normal_distribution,
// whose values differ between standard libraries).
void fill_normal(MatrixF& x, std::uint64_t seed) {
  std::mt19937_64 gen(mix(seed));
  const double two_pi = 6.283185307179586;
  auto uniform = [&gen] { return (double(gen() >> 11) + 0.5) * 0x1.0p-53; };  // in (0, 1)
  float* v = x.data();
  const Eigen::Index n = x.size();
  for (Eigen::Index k = 0; k < n; k += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform())), a = two_pi * uniform();
    v[k] = float(r * std::cos(a));
    if (k + 1 < n) v[k + 1] = float(r * std::sin(a));
  }
}

MatrixF make_matrix(std::int64_t rows, std::int64_t d, Fill f, std::uint64_t seed) {
  MatrixF x(rows, d);
  switch (f.kind) {
    case Fill::Kind::random: fill_normal(x, seed); break;
    case Fill::Kind::zero: x.setZero(); break;
    case Fill::Kind::constant: x.setConstant(f.value); break;
    case Fill::Kind::index:
      for (std::int64_t r = 0; r < rows; ++r) x.row(r).setConstant(float(r));
      break;
  }
  return x;
}

// What `field` may hold in dtype t: "a finite number representable in fp16 (|x| <= 65504)".
std::string representable(Dtype t) {
  char max[32];
  std::snprintf(max, sizeof max, "%.5g", dtype_max(t));
  return "a finite number representable in " + std::string(to_string(t)) + " (|x| <= " + max + ")";
}

std::string shown(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// A constant fill must be a finite value of t; an index fill's largest row index too.
void check_fill(std::string_view field, const std::string& text, const Fill& f, std::int64_t rows, Dtype t) {
  if (f.kind == Fill::Kind::constant && !(std::abs(double(f.value)) <= dtype_max(t)))
    throw ConfigError(std::string(field), text, representable(t));
  if (f.kind == Fill::Kind::index && double(rows - 1) > dtype_max(t))
    throw ConfigError(std::string(field), "index",
                      "row indices representable in " + std::string(to_string(t)) + ": at most " +
                          shown(dtype_max(t) + 1) + " rows (" + std::to_string(rows) + " given)");
}

}  // namespace

double dtype_max(Dtype t) {
  switch (t) {
    case Dtype::fp16: return double(Eigen::NumTraits<Eigen::half>::highest());
    case Dtype::bf16: return double(Eigen::NumTraits<Eigen::bfloat16>::highest());
    case Dtype::fp32: break;
  }
  return double(std::numeric_limits<float>::max());
}

Fill parse_fill(std::string_view field, std::string_view text, Dtype t) {
  const std::string s(text);
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool number = !text.empty() && ec == std::errc() && end == text.data() + text.size();
  if (number && !(std::abs(v) <= dtype_max(t))) throw ConfigError(std::string(field), s, representable(t));
  const Fill f = parse_fill(field, text);
  check_fill(field, s, f, 0, t);
  return f;
}

Fill parse_fill(std::string_view field, std::string_view text) {
  if (text == "random") return {Fill::Kind::random, 0};
  if (text == "zero") return {Fill::Kind::zero, 0};
  if (text == "index") return {Fill::Kind::index, 0};
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (!text.empty() && ec == std::errc() && end == text.data() + text.size() && std::isfinite(float(v)))
    return {Fill::Kind::constant, float(v)};
  throw ConfigError(std::string(field), std::string(text),
                    "one of random, zero, index, or a finite number (a constant fill)");
}

Inputs make_inputs(const Problem& p, Fill q, Fill k, Fill v, std::uint64_t seed) {
  const Tiling& t = p.tiling;
  check_fill("q", shown(q.value), q, t.n_q, p.dtype);
  check_fill("k", shown(k.value), k, t.n_k, p.dtype);
  check_fill("v", shown(v.value), v, t.n_k, p.dtype);
  Inputs in{make_matrix(t.n_q, t.d, q, seed * 3 + 0), make_matrix(t.n_k, t.d, k, seed * 3 + 1),
            make_matrix(t.n_k, t.d, v, seed * 3 + 2), MatrixF()};  // dO: the backward's overload below
  for (MatrixF* x : {&in.Q, &in.K, &in.V}) round_to_dtype(p.dtype, *x);
  return in;
}

Inputs make_inputs(const Problem& p, Fill q, Fill k, Fill v, Fill dO, std::uint64_t seed) {
  Inputs in = make_inputs(p, q, k, v, seed);
  if (!p.backward()) return in;
  check_fill("do", shown(dO.value), dO, p.tiling.n_q, p.dtype);
  in.dO = make_matrix(p.tiling.n_q, p.tiling.d, dO, ~(seed * 3));  // a stream apart from Q, K, V's
  round_to_dtype(p.dtype, in.dO);
  return in;
}

}  // namespace flashlab
