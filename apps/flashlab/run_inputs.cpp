// run_inputs.cpp — inputs from fills or .npy files, outputs to .npy files (run_inputs.hpp).
#include "run_inputs.hpp"

#include <cmath>
#include <filesystem>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/npy.hpp"
#include "flashlab/trace/output_file.hpp"

namespace flashlab::cli {
namespace {

namespace fs = std::filesystem;

// The (rows, d) matrix of input `name` (Q, K or V) read from `path`, checked against p.
MatrixF read_input(const std::string& path, const char* name, std::int64_t rows, const Problem& p) {
  const NpyArray a = read_npy(path);
  const NpyType want = npy_type(p.dtype);
  if (a.type != want)
    throw ConfigError(path, fmt::format("an array of '{}'", npy_descr(a.type)),
                      fmt::format("'{}' for --dtype {} (the input dtype; bf16 as its 16 bits in '<u2')",
                                  npy_descr(want), to_string(p.dtype)));
  const std::vector<std::int64_t> shape{rows, p.tiling.d};
  if (a.shape != shape)
    throw ConfigError(path, fmt::format("{} of shape {}", name, npy_shape_text(a.shape)),
                      fmt::format("the shape {} ({}, d) of the config, one (batch, head)", npy_shape_text(shape),
                                  rows == p.tiling.n_q && (name[0] == 'Q' || name[0] == 'd') ? "N_q" : "N_k"));
  for (std::size_t k = 0; k < a.values.size(); ++k)
    if (!std::isfinite(a.values[k]))
      throw ConfigError(path, fmt::format("{} element {} (C order) = {}", name, k, a.values[k]), "finite values only");
  return Eigen::Map<const MatrixF>(a.values.data(), rows, p.tiling.d);
}

}  // namespace

bool is_npy_path(const std::string& text) { return text.size() > 4 && text.ends_with(".npy"); }

Inputs make_run_inputs(const Problem& p, const std::string& q, const std::string& k, const std::string& v,
                       const std::string& dO, std::uint64_t seed) {
  // Fills first (their errors name the flag), then files; a file's place is filled with zeros.
  const auto fill = [&](const char* field, const std::string& text) {
    if (is_npy_path(text)) return Fill{Fill::Kind::zero};
    try {
      return parse_fill(field, text, p.dtype);
    } catch (const ConfigError& e) {  // the command line also takes a file: say so, and how it is told apart
      throw ConfigError(e.field(), e.value(), e.allowed() + ", or FILE.npy (a NumPy file: the name ends in .npy)");
    }
  };
  const Fill dO_fill = p.backward() ? fill("do", dO) : Fill{};
  Inputs in = make_inputs(p, fill("q", q), fill("k", k), fill("v", v), dO_fill, seed);
  const Tiling& t = p.tiling;
  if (is_npy_path(q)) in.Q = read_input(q, "Q", t.n_q, p);
  if (is_npy_path(k)) in.K = read_input(k, "K", t.n_k, p);
  if (is_npy_path(v)) in.V = read_input(v, "V", t.n_k, p);
  if (p.backward() && is_npy_path(dO)) in.dO = read_input(dO, "dO", t.n_q, p);
  return in;
}

void check_out_dir(const std::string& dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::is_directory(st)) return;
  if (fs::exists(st)) throw ConfigError("out", dir, "a directory for O and L (it exists and is not one)");
  const fs::path parent = fs::path(dir).parent_path().empty() ? fs::path(".") : fs::path(dir).parent_path();
  if (!fs::is_directory(parent, ec))
    throw ConfigError("out", dir, "a directory, or one that can be created in an existing folder (" +
                                      parent.string() + " is not a directory)");
}

namespace {

std::string output_file(const std::string& dir, const char* name, const std::string& suffix) {
  return (fs::path(dir) / (name + suffix + ".npy")).string();
}

void create_out_dir(const std::string& dir) {
  check_out_dir(dir);
  std::error_code ec;
  fs::create_directory(dir, ec);
  if (ec) throw ConfigError("out", dir, "a directory that can be created (" + ec.message() + ")");
}

}  // namespace

bool prepare_out_dir(const std::string& dir, const std::vector<std::string>& suffixes, bool backward) {
  const bool created = !fs::exists(dir);
  create_out_dir(dir);
  const auto remove_created = [&] {  // only the empty folder made here; write_run_outputs makes it again
    std::error_code ec;
    if (created && fs::is_empty(dir, ec) && !ec) fs::remove(dir, ec);
  };
  try {
    for (const std::string& suffix : suffixes)
      for (const char* name : {"O", "L", "dQ", "dK", "dV"})
        if (backward || name[0] != 'd') check_creatable(output_path(output_file(dir, name, suffix)));
  } catch (...) {
    remove_created();
    throw;
  }
  remove_created();
  return created;
}

std::vector<OutFile> run_output_files(const std::string& dir, const std::string& suffix, const Problem& p,
                                      const NumericResult& r) {
  const Tiling& t = p.tiling;
  const NpyArray o{npy_type(p.dtype), {t.n_q, t.d}, std::vector<float>(r.O.data(), r.O.data() + r.O.size())};
  const NpyArray l{NpyType::f4, {t.n_q}, std::vector<float>(r.L.data(), r.L.data() + r.L.size())};
  std::vector<OutFile> files{{output_file(dir, "O", suffix), encode_npy(o)}, {output_file(dir, "L", suffix), encode_npy(l)}};
  if (p.backward()) {
    const auto add = [&](const char* name, const MatrixF& x) {
      const NpyArray a{npy_type(p.dtype), {x.rows(), x.cols()}, std::vector<float>(x.data(), x.data() + x.size())};
      files.emplace_back(output_file(dir, name, suffix), encode_npy(a));
    };
    add("dQ", r.dQ);
    add("dK", r.dK);
    add("dV", r.dV);
  }
  return files;
}

void write_run_outputs(const std::string& dir, bool created, const std::vector<OutFile>& files) {
  try {
    create_out_dir(dir);
    write_output_files({files.begin(), files.end()});  // (path, bytes) viewed, not copied
  } catch (...) {
    std::error_code ec;
    if (created && fs::is_empty(dir, ec) && !ec) fs::remove(dir, ec);  // only the empty folder run made
    throw;
  }
}

}  // namespace flashlab::cli
