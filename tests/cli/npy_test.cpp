// `flashlab run --q FILE.npy --k ... --v ... --out DIR`: the user's own tensors in, O and L out
// (issue 9, "their own tensors"). The files are written and read here byte by byte after NumPy's
// format description; the expected O and L are closed forms (every logit 0: O is the mean of the
// visible V rows, L = ln(visible keys)). Where /usr/bin/python3 has NumPy, NumPy writes random
// inputs and checks O and L against its own float64 softmax.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "run_cli.hpp"
#include "../common/approx.hpp"

namespace fs = std::filesystem;

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// A version 1.0 .npy file: magic, version, u16 header length, the dict padded with spaces and a
// '\n' so that the data starts at a multiple of 64 bytes, then the data.
std::string npy(const std::string& descr, const std::vector<std::int64_t>& shape, const std::string& data) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  header.append((10 + header.size() + 1 + 63) / 64 * 64 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  return out + header + data;
}

std::string f32_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());  // x86-64 and ARM64 hosts are little-endian
  return s;
}

void write_file(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A .npy file split into its header dict and data (version 1.0, as flashlab writes).
struct Npy {
  std::string dict, data;
};
Npy split(const std::string& bytes) {
  REQUIRE(bytes.size() >= 10);
  REQUIRE(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
  const std::size_t len = std::uint8_t(bytes[8]) | std::uint8_t(bytes[9]) << 8;
  REQUIRE((10 + len) % 64 == 0);
  return {bytes.substr(10, len), bytes.substr(10 + len)};
}

std::vector<float> f32_values(const std::string& data) {
  std::vector<float> v(data.size() / 4);
  std::memcpy(v.data(), data.data(), v.size() * 4);
  return v;
}

std::uint16_t half_bits(const std::string& data, std::size_t k) {
  return std::uint16_t(std::uint8_t(data[2 * k]) | std::uint8_t(data[2 * k + 1]) << 8);
}

bool have_numpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("run --q/--k/--v FILE.npy and --out DIR: O and L as .npy, closed forms") {
  // N = 8 keys and queries, d = 2, Q = K = 0: every logit 0, O[r] = mean of V = (0 + ... + 7) / 8
  // = 3.5 in both columns, L = ln 8. fp32 inputs, so O.npy is '<f4'.
  const std::string dir = make_temp_dir();
  std::vector<float> zeros(16, 0.0f), v;
  for (int j = 0; j < 8; ++j) v.insert(v.end(), {float(j), float(j)});
  write_file(dir + "/q.npy", npy("<f4", {8, 2}, f32_bytes(zeros)));
  write_file(dir + "/k.npy", npy("<f4", {8, 2}, f32_bytes(zeros)));
  write_file(dir + "/v.npy", npy("<f4", {8, 2}, f32_bytes(v)));
  const std::string files = "--q " + dir + "/q.npy --k " + dir + "/k.npy --v " + dir + "/v.npy";
  const CliResult r = run_cli("run --seq 8 --d 2 --br 4 --bc 4 --dtype fp32 " + files + " --out " + dir + "/out");
  INFO(r.out, r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("inputs Q " + dir + "/q.npy, K " + dir + "/k.npy") != std::string::npos);
  CHECK(r.out.find("wrote " + dir + "/out/O.npy") != std::string::npos);
  CHECK(r.out.find("wrote " + dir + "/out/L.npy") != std::string::npos);
  const Npy o = split(slurp(dir + "/out/O.npy")), l = split(slurp(dir + "/out/L.npy"));
  CHECK(o.dict.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (8, 2), }", 0) == 0);
  CHECK(l.dict.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }", 0) == 0);
  CHECK(f32_values(o.data) == std::vector<float>(16, 3.5f));
  const std::vector<float> lv = f32_values(l.data);
  REQUIRE(lv.size() == 8);
  for (float x : lv) CHECK(x == flashlab::testing::approx(std::log(8.0)).epsilon(1e-6));
  CHECK(std::distance(fs::directory_iterator(dir + "/out"), {}) == 2);  // no temporary file left

  // columns that differ (no fill can give them): V[j] = (j, 2j), Q and K filled with zeros: O is
  // the mean of V's rows, (3.5, 7); a file for V mixes with fills for Q and K.
  std::vector<float> v2;
  for (int j = 0; j < 8; ++j) v2.insert(v2.end(), {float(j), float(2 * j)});
  write_file(dir + "/v2.npy", npy("<f4", {8, 2}, f32_bytes(v2)));
  const nlohmann::json jr = run_json("run --seq 8 --d 2 --br 4 --bc 4 --dtype fp32 --q zero --k zero --v " + dir +
                                     "/v2.npy --show-rows 0 --json");
  CHECK(jr.at("rows").at("v2").at(0).at("O") == nlohmann::json::array({3.5, 7.0}));

  // fp16: the same values as '<f2' (0 = 0x0000, j = exact halves); O.npy is '<f2', 3.5 = 0x4300
  std::string q16(32, '\0'), v16;
  for (int j = 0; j < 8; ++j) {
    const std::uint16_t bits[] = {0x0000, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700};  // 0..7
    for (int c = 0; c < 2; ++c) v16 += {char(bits[j] & 0xff), char(bits[j] >> 8)};
  }
  write_file(dir + "/q16.npy", npy("<f2", {8, 2}, q16));
  write_file(dir + "/v16.npy", npy("<f2", {8, 2}, v16));
  const CliResult h = run_cli("run --algo v1,v2 --seq 8 --d 2 --br 4 --bc 4 --dtype fp16 --q " + dir + "/q16.npy --k " +
                              dir + "/q16.npy --v " + dir + "/v16.npy --out " + dir + "/out16");
  INFO(h.out, h.err);
  REQUIRE(h.code == 0);
  for (const char* algo : {"v1", "v2"}) {
    const Npy o16 = split(slurp(dir + "/out16/O_" + algo + ".npy"));
    CHECK(o16.dict.rfind("{'descr': '<f2', 'fortran_order': False, 'shape': (8, 2), }", 0) == 0);
    REQUIRE(o16.data.size() == 32);
    for (std::size_t k = 0; k < 16; ++k) CHECK(half_bits(o16.data, k) == 0x4300);
    CHECK(split(slurp(dir + "/out16/L_" + algo + ".npy")).dict.find("'<f4'") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("bad input files: dtype, shape, values, truncation, not a file, and a bad --out: exit 2 naming them") {
  const std::string dir = make_temp_dir(), q = dir + "/q.npy";
  const std::string run = "run --seq 8 --d 2 --br 4 --bc 4 --q " + q;
  const auto error_of = [&](const std::string& args) {
    const CliResult r = run_cli(args);
    INFO("flashlab ", args, "\nstderr: ", r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    return r.err;
  };
  write_file(q, npy("<f4", {8, 2}, f32_bytes(std::vector<float>(16, 1.0f))));
  CHECK(error_of(run + " --dtype fp16").find(q + " = an array of '<f4': '<f2' for --dtype fp16") != std::string::npos);
  CHECK(error_of(run + " --dtype bf16").find("'<u2' for --dtype bf16 (the input dtype; bf16 as its 16 bits in '<u2')") !=
        std::string::npos);
  CHECK(error_of("run --seq 8 --d 4 --br 4 --bc 4 --dtype fp32 --q " + q)
            .find(q + " = Q of shape (8, 2): the shape (8, 4) (N_q, d) of the config") != std::string::npos);
  CHECK(error_of("run --seq 8 --nk 6 --d 2 --br 4 --bc 4 --dtype fp32 --k " + q)
            .find(q + " = K of shape (8, 2): the shape (6, 2) (N_k, d)") != std::string::npos);
  std::vector<float> with_nan(16, 1.0f);
  with_nan[5] = std::nanf("");
  write_file(q, npy("<f4", {8, 2}, f32_bytes(with_nan)));
  CHECK(error_of(run + " --dtype fp32").find(q + " = Q element 5 (C order) = nan: finite values only") != std::string::npos);
  write_file(q, npy("<f4", {8, 2}, f32_bytes(std::vector<float>(15, 1.0f))));
  CHECK(error_of(run + " --dtype fp32").find(q + ": npy data") != std::string::npos);
  write_file(q, "not a numpy file at all");
  CHECK(error_of(run + " --dtype fp32").find(q + ": npy magic") != std::string::npos);
  fs::remove(q);
  CHECK(error_of(run + " --dtype fp32").find(q) != std::string::npos);  // missing: named
  fs::create_directory(q);
  CHECK(error_of(run + " --dtype fp32").find("not a regular file") != std::string::npos);
  fs::remove(q);

  write_file(q, npy("<f4", {8, 2}, f32_bytes(std::vector<float>(16, 1.0f))));
  write_file(dir + "/file", "x");
  CHECK(error_of(run + " --dtype fp32 --out " + dir + "/file").find("out = " + dir + "/file: a directory for O and L") !=
        std::string::npos);
  CHECK(error_of(run + " --dtype fp32 --out " + dir + "/no/such").find("out = " + dir + "/no/such: a directory, or one") !=
        std::string::npos);
  // refused before any work (stdout stays empty): a folder that cannot be created, and a directory
  // where O.npy would go
  CHECK(error_of(run + " --dtype fp32 --out /proc/flashlab-out").find("out = /proc/flashlab-out: a directory that can be "
                                                                      "created") != std::string::npos);
  fs::create_directories(dir + "/odir/O.npy");
  CHECK(error_of(run + " --dtype fp32 --out " + dir + "/odir").find(dir + "/odir/O.npy") != std::string::npos);
  // a name without .npy is read as a fill: the message says how a file is told apart
  CHECK(error_of("run --seq 8 --d 2 --br 4 --bc 4 --q " + dir + "/qnoext")
            .find(": one of random, zero, index, or a finite number (a constant fill), or FILE.npy (a NumPy file: the "
                  "name ends in .npy)") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("NumPy's own float64 softmax agrees with O.npy and L.npy of random inputs it wrote") {
  if (!have_numpy()) {
    MESSAGE("/usr/bin/python3 has no numpy (apt-get install python3-numpy): the independent check is skipped");
    return;
  }
  const std::string dir = make_temp_dir();
  const std::string make = "/usr/bin/python3 -c \"import numpy as np; r = np.random.default_rng(5); "
                           "[np.save(f'" + dir + "/{n}.npy', r.standard_normal((100, 16)).astype('<f2')) "
                           "for n in 'qkv']\"";
  REQUIRE(std::system(make.c_str()) == 0);
  const CliResult r = run_cli("run --algo v1,v2 --seq 100 --d 16 --br 32 --bc 16 --mask causal --dtype fp16 "
                              "--q " + dir + "/q.npy --k " + dir + "/k.npy --v " + dir + "/v.npy --out " + dir);
  INFO(r.out, r.err);
  REQUIRE(r.code == 0);
  // O at fp16 holds 11 significant bits: agreement to 2e-3 relative (Frobenius), L to 1e-4
  const std::string check =
      "/usr/bin/python3 -c \"import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "q, k, v = (np.load(f'{d}/{n}.npy').astype(np.float64) for n in 'qkv')\n"
      "s = q @ k.T / 4.0 + np.triu(np.full((100, 100), -np.inf), 1)\n"
      "m = s.max(-1, keepdims=True); p = np.exp(s - m); l = p.sum(-1, keepdims=True)\n"
      "o = p @ v / l; L = (m + np.log(l))[..., 0]\n"
      "for a in ['v1', 'v2']:\n"
      "    O = np.load(f'{d}/O_{a}.npy'); LL = np.load(f'{d}/L_{a}.npy')\n"
      "    assert O.dtype == np.float16 and O.shape == (100, 16), (O.dtype, O.shape)\n"
      "    assert LL.dtype == np.float32 and LL.shape == (100,), (LL.dtype, LL.shape)\n"
      "    eo = np.linalg.norm(O - o) / np.linalg.norm(o); el = np.abs(LL - L).max()\n"
      "    assert eo < 2e-3 and el < 1e-4, (a, eo, el)\n"
      "\" " + dir;
  CHECK(std::system(check.c_str()) == 0);
  fs::remove_all(dir);
}

// `run --out` on a file system that takes only some of the files (each file limited to 4 KiB,
// RLIMIT_FSIZE through `ulimit -f 8`; SIGXFSZ ignored so that the write fails with EFBIG): with the
// backward pass, N_q = 16 and N_k = 256 at fp16, O.npy, L.npy and dQ.npy (N_q rows: 640, 192 and
// 640 bytes) fit and dK.npy (N_k rows: 8,320 bytes) does not. Nothing of the set is left: no file,
// no temporary, and not the folder the run made; a folder that was there stays, empty.
TEST_CASE("run --out: a write that fails part-way leaves no file of the set, nor the folder the run made") {
  const std::string dir = make_temp_dir();
  const auto run_limited = [&](const std::string& out) {
    const std::string cmd = "sh -c \"trap '' XFSZ; ulimit -f 8; exec " + std::string(FLASHLAB_BIN) +
                            " run --algo v2 --pass both --nq 16 --nk 256 --d 16 --br 16 --bc 16 --dtype fp16 --out " +
                            out + "\" >" + dir + "/stdout 2>" + dir + "/stderr";
    const int status = std::system(cmd.c_str());
    const std::string text = slurp(dir + "/stderr");
    INFO(cmd, "\nstderr: ", text);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 4);
    CHECK(text == "flashlab: error: cannot write " + out + "/dK.npy: File too large\n");
  };
  run_limited(dir + "/made");
  CHECK_FALSE(fs::exists(dir + "/made"));
  fs::create_directory(dir + "/kept");
  run_limited(dir + "/kept");
  CHECK(fs::is_directory(dir + "/kept"));
  CHECK(fs::is_empty(dir + "/kept"));
  // without the limit the same run writes all five
  const CliResult ok = run_cli("run --algo v2 --pass both --nq 16 --nk 256 --d 16 --br 16 --bc 16 --dtype fp16 --out " +
                               dir + "/kept");
  INFO(ok.out, ok.err);
  CHECK(ok.code == 0);
  CHECK(std::distance(fs::directory_iterator(dir + "/kept"), {}) == 5);
  CHECK(fs::file_size(dir + "/kept/dK.npy") == 8320);
}
