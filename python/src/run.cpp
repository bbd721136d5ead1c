// run.cpp — flashlab.run(): the numerics of one (batch, head) on the caller's NumPy arrays, as
// `flashlab run --q q.npy --k k.npy --v v.npy --out DIR` computes them (numerics/numerics.hpp
// simulate), O and L returned as arrays.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>

#include "bindings.hpp"
#include "interrupt.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/numerics.hpp"

namespace flashlab::python {
namespace {

// The NumPy dtype that holds one element of t, as `run --q FILE.npy` wants it (numerics/npy.hpp):
// fp16 '<f2', bf16 '<u2' (its 16 bits: NumPy has no bfloat16), fp32 '<f4'.
const char* numpy_type(Dtype t) { return t == Dtype::fp16 ? "<f2" : t == Dtype::bf16 ? "<u2" : "<f4"; }
const char* numpy_name(Dtype t) { return t == Dtype::fp16 ? "float16" : t == Dtype::bf16 ? "uint16 (bf16 bits)" : "float32"; }

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t k = 0; k < a.ndim(); ++k) s += (k ? ", " : "") + std::to_string(a.shape(k));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// Input `name` (q, k or v) as fp32 values, checked against p: a numpy.ndarray of the dtype's
// type, of shape (rows, d), every value finite. Any memory order; the values are copied once.
MatrixF input(const py::object& x, const char* name, std::int64_t rows, const char* rows_name, const Problem& p) {
  const std::int64_t d = p.tiling.d;
  const std::string want = fmt::format("a numpy.ndarray of {} ('{}') and shape ({}, {}) = ({}, d), for dtype {}",
                                       numpy_name(p.dtype), numpy_type(p.dtype), rows, d, rows_name, to_string(p.dtype));
  if (!py::isinstance<py::array>(x))
    throw ConfigError(name, "a " + py::str(x.get_type().attr("__name__")).cast<std::string>(), want);
  const auto a = py::reinterpret_borrow<py::array>(x);
  const std::string got =
      fmt::format("an array of '{}' and shape {}", py::str(a.dtype().attr("str")).cast<std::string>(), shape_text(a));
  if (!a.dtype().equal(py::dtype(numpy_type(p.dtype))) || a.ndim() != 2 || a.shape(0) != rows || a.shape(1) != d)
    throw ConfigError(name, got, want);
  // fp32 values, exact: fp16 widens; a bf16 value is the top 16 bits of its fp32 value.
  py::object f32 = p.dtype == Dtype::bf16
                       ? a.attr("astype")("<u4").attr("__lshift__")(16).attr("view")("<f4")
                       : a.attr("astype")("<f4");
  const auto values = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(f32);
  MatrixF m = Eigen::Map<const MatrixF>(values.data(), rows, d);
  for (Eigen::Index k = 0; k < m.size(); ++k)
    if (!std::isfinite(m.data()[k]))
      throw ConfigError(name, fmt::format("element ({}, {}) = {}", k / d, k % d, m.data()[k]), "finite values only");
  return m;
}

// O (N_q, d) at the input dtype (its values are the dtype's: the conversion is exact).
py::array output_O(const MatrixF& O, Dtype t) {
  py::array_t<float> f32({py::ssize_t(O.rows()), py::ssize_t(O.cols())});
  std::memcpy(f32.mutable_data(), O.data(), sizeof(float) * std::size_t(O.size()));
  if (t == Dtype::fp32) return f32;
  if (t == Dtype::fp16) return f32.attr("astype")("<f2");
  return f32.attr("view")("<u4").attr("__rshift__")(16).attr("astype")("<u2");
}

// The Q block of `steps`, checked as `run --steps I` checks it.
std::int64_t steps_block(const py::object& steps, const Problem& p) {
  const std::int64_t t_r = p.tiling.t_r();
  const std::string allowed = fmt::format("a Q block index from 0 to {} (T_r - 1)", t_r - 1);
  if (py::isinstance<py::bool_>(steps) || !PyIndex_Check(steps.ptr()))
    throw ConfigError("steps", py::repr(steps).cast<std::string>(), allowed);
  const py::int_ index(steps);
  // compared as Python ints first: a value past int64 (2**70) is out of range, not a cast failure
  if (index < py::int_(0) || index >= py::int_(t_r))
    throw ConfigError("steps", static_cast<std::string>(py::str(py::object(index))), allowed);
  const auto block = index.cast<std::int64_t>();
  return block;
}

// m and l of one Q block after every step (numerics.hpp StatSnapshot) as arrays of one row per step.
py::dict steps_arrays(const std::vector<StatSnapshot>& snaps, std::int64_t rows) {
  const auto n = py::ssize_t(snaps.size());
  py::array_t<std::uint32_t> step(n);
  py::array_t<std::int64_t> j(n);
  py::array_t<bool> skip(n);
  py::array_t<float> m({n, py::ssize_t(rows)}), l({n, py::ssize_t(rows)});
  for (py::ssize_t s = 0; s < n; ++s) {
    const StatSnapshot& x = snaps[std::size_t(s)];
    step.mutable_at(s) = x.step;
    j.mutable_at(s) = x.j;
    skip.mutable_at(s) = x.skip;
    std::memcpy(m.mutable_data(s, 0), x.m.data(), sizeof(float) * std::size_t(rows));
    std::memcpy(l.mutable_data(s, 0), x.l.data(), sizeof(float) * std::size_t(rows));
  }
  py::dict out;
  out["step"] = step;
  out["j"] = j;
  out["skip"] = skip;
  out["m"] = m;
  out["l"] = l;
  return out;
}

// (rows, d) at the dtype, as O: dQ, dK, dV.
py::dict grads_dict(const NumericResult& r, Dtype t) {
  py::array_t<float> D(py::ssize_t(r.D.size()));
  std::memcpy(D.mutable_data(), r.D.data(), sizeof(float) * std::size_t(r.D.size()));
  py::dict g;
  g["dQ"] = output_O(r.dQ, t);
  g["dK"] = output_O(r.dK, t);
  g["dV"] = output_O(r.dV, t);
  g["D"] = D;
  return g;
}

py::tuple run(const py::object& cfg, const py::object& q, const py::object& k, const py::object& v,
              const py::object& steps, const py::object& dO, const py::object& schedule, const py::kwargs& kwargs) {
  const PyConfig c = config_arg(cfg, kwargs);
  const Problem& p = c.problem;
  const std::optional<Schedule> s = schedule_arg(schedule);
  check_numerics_size(p);  // ConfigError("nq*nk", ...): the float64 reference's and the walk's size
  NumericsOptions opt;
  if (!steps.is_none()) opt.trace_blocks = {steps_block(steps, p)};
  Inputs in;
  in.Q = input(q, "q", p.tiling.n_q, "N_q", p);
  in.K = input(k, "k", p.tiling.n_k, "N_k", p);
  in.V = input(v, "v", p.tiling.n_k, "N_k", p);
  if (p.backward()) {
    if (dO.is_none())
      throw ConfigError("do", "None", "dO, a numpy.ndarray of shape (N_q, d) of the dtype: the config runs the backward pass");
    in.dO = input(dO, "do", p.tiling.n_q, "N_q", p);
  } else if (!dO.is_none()) {
    throw ConfigError("do", "an array", "None: the config runs the forward pass only (pass_='backward' or 'both' uses dO)");
  }
  const NumericResult r = without_gil([&] {  // Ctrl-C stops p's own walk (interrupt.hpp); a schedule's runs on
    SignalPoll poll("run");
    poll.start(p);
    return s ? simulate(p, *s, in, opt) : simulate(p, in, opt, &poll);
  });
  py::array_t<float> L(py::ssize_t(r.L.size()));
  std::memcpy(L.mutable_data(), r.L.data(), sizeof(float) * std::size_t(r.L.size()));
  py::list out;
  out.append(output_O(r.O, p.dtype));
  out.append(L);
  if (!opt.trace_blocks.empty()) out.append(steps_arrays(r.traces.front(), p.tiling.rows(opt.trace_blocks.front())));
  if (p.backward()) out.append(grads_dict(r, p.dtype));
  return py::tuple(out);
}

}  // namespace

void bind_run(py::module_& m) {
  m.def("run", &run, py::arg("cfg"), py::arg("q"), py::arg("k"), py::arg("v"), py::kw_only(),
        py::arg("steps") = py::none(), py::arg("do") = py::none(), py::arg("schedule") = py::none(), R"doc(
run(cfg, q, k, v, *, steps=None, do=None, schedule=None, **kwargs) -> (O, L), (O, L, steps) with steps=I,
and a last element `grads` when the config runs the backward pass (pass_='backward' or 'both')

The forward pass of cfg's algorithm on your Q, K, V, one (batch, head), computed step by step as
the schedule walks (docs/model.md "Numerics"): what `flashlab run --q q.npy --k k.npy --v v.npy
--out DIR` writes as O.npy and L.npy.

q: (N_q, d); k, v: (N_k, d) numpy arrays of cfg's dtype — float16 for 'fp16', float32 for 'fp32',
uint16 holding the bf16 bits for 'bf16' — finite, any memory order.
Returns O, (N_q, d) at the input dtype (the same NumPy type as q), O = softmax(scale Q K^T + mask) V;
and L, (N_q,) float32, the log-sum-exp of each row's scaled, masked scores (natural log; +inf for a
row with no visible key, whose O row is 0). Inputs are used as they are (already the dtype's
values); products accumulate in fp32, P~ is rounded to the dtype before P~ V (FA2's kernels; FA2
Alg. 1 lines 8-13, FA1 Alg. 1 lines 9-12, standard Alg. 0).

steps=I (a Q block index, 0 <= I < T_r): also m and l of Q block I after every step that holds
them (`flashlab run --steps I`; V2 after each step of the block's thread block, V1 after line 2
and after each tile (i, j) of the block, standard after its softmax and output launches), a dict
of arrays with one row per step: 'step' (S,) uint32 (the executor's step number), 'j' (S,) int64
(the K/V block of the step's tile, -1: none), 'skip' (S,) bool (the step skipped tile (I, j)),
'm' and 'l' (S, rows(I)) float32 (the running row max and row sum of exp; m = -inf and l = 0
before any visible key). FA1 Alg. 1 lines 9-11, FA2 Alg. 1 lines 8-10.

do: with pass_='backward' or 'both', dO (N_q, d) of the dtype, the gradient of the loss with respect
to O; grads is then a dict of 'dQ' (N_q, d), 'dK', 'dV' (N_k, d) at the input dtype and 'D' (N_q,)
float32 = rowsum(dO o O), computed as the algorithm's backward schedule walks (FA1 Alg. 3 and 4,
FA2 Alg. 2; docs/model.md "Backward pass"). Rows with no visible key get dQ = 0.

schedule: a forward schedule to walk instead of cfg's own, in the form schedule() returns: its loads,
stores and equations move and compute real tiles; a row whose O_i it never stores reads NaN, and an
equation whose operands are not on chip (scores before K_j is loaded) raises ValueError.

cfg: a flashlab.Config, or None with keyword arguments that make one.
Raises ValueError (flashlab.ConfigError) naming the argument (q, k or v), what it got and what is
expected, for another type, dtype or shape, or a value that is not finite; and for a config too
large for the numerics (N_q N_k <= 2^28, N_q N_k max(d, 64) <= 2^34), and for steps outside
[0, T_r) (field 'steps', as the command line).
)doc");
}

}  // namespace flashlab::python
