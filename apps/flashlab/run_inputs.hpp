// run_inputs.hpp — where `flashlab run` takes Q, K and V from (a fill, or the user's own tensor in
// a NumPy .npy file) and where it puts O and L (--out DIR, .npy files). Issue 9, "their own tensors".
//
// A value of --q/--k/--v that ends in ".npy" is a file; anything else is a fill (numerics.hpp).
// A file holds one (batch, head): shape (N_q, d) for Q, (N_k, d) for K and V, elements of the input
// dtype ('<f2' fp16, '<u2' bf16 as its 16 bits, '<f4' fp32: numerics/npy.hpp), finite.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "flashlab/numerics/numerics.hpp"

namespace flashlab::cli {

/// Whether an input text names a .npy file (ends in ".npy") rather than a fill.
bool is_npy_path(const std::string& text);

/// The inputs of p from the --q, --k, --v texts and the seed: fills through make_inputs, files
/// read with read_npy. Throws ConfigError naming the flag for a bad fill, and the file (its path
/// as the field) for a file that cannot be read, is not a valid .npy file, has another dtype or
/// shape than the config asks for (both named), or holds a value that is not finite.
/// With a backward pass (p.backward()), dO from `dO` the same way (flag "do", shape (N_q, d)).
Inputs make_run_inputs(const Problem& p, const std::string& q, const std::string& k, const std::string& v,
                       const std::string& dO, std::uint64_t seed);

/// Checks --out DIR before any work: an existing directory, or a missing one whose parent is a
/// directory (it is created when the outputs are written). Throws ConfigError("out", dir, ...).
void check_out_dir(const std::string& dir);

/// Prepares --out DIR before any work, so that a run never computes what it cannot write: checks it
/// (check_out_dir), creates it when missing, and checks that each DIR/O<suffix>.npy and
/// DIR/L<suffix>.npy can be written (flashlab/trace/output_file.hpp output_path, check_creatable:
/// a directory or a device in their place, an unwritable folder) — and with `backward`
/// DIR/dQ<suffix>.npy, dK, dV. A DIR it created for the checks is removed again (write_run_outputs
/// makes it once the files exist), so that a run stopped in its work (Ctrl-C, memory) leaves no
/// empty folder. Returns whether DIR was missing. Throws ConfigError.
bool prepare_out_dir(const std::string& dir, const std::vector<std::string>& suffixes, bool backward = false);

/// A file of --out: its path and its bytes.
using OutFile = std::pair<std::string, std::string>;

/// The files of one algorithm's result in `dir`: DIR/O<suffix>.npy — shape (N_q, d) at the input
/// dtype, as the simulator stores O — and DIR/L<suffix>.npy, shape (N_q,) in fp32 ('<f4'; +inf
/// for a row with no visible key); with a backward pass also dQ<suffix>.npy (N_q, d),
/// dK<suffix>.npy and dV<suffix>.npy (N_k, d), at the input dtype.
std::vector<OutFile> run_output_files(const std::string& dir, const std::string& suffix, const Problem& p,
                                      const NumericResult& r);

/// Writes the files of every algorithm run (run_output_files) into `dir`, all whole or none
/// (write_output_files, flashlab/trace/output_file.hpp). When a write fails, `dir` is also removed
/// if `created` (prepare_out_dir made it) and it is still empty; the error is rethrown
/// (std::runtime_error "cannot write <path>: <errno text>", or ConfigError).
void write_run_outputs(const std::string& dir, bool created, const std::vector<OutFile>& files);

}  // namespace flashlab::cli
