// .npy files (numerics/npy.hpp): bytes written by hand after NumPy's format description, round
// trips of every element type, headers of versions 1.0, 2.0 and 3.0, and every malformed file
// refused with the field it breaks. NumPy itself, where /usr/bin/python3 has it, writes and reads
// files too (an independent implementation).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <sys/stat.h>

#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/npy.hpp"

using namespace flashlab;

namespace {

// A file from its parts: magic, version, the little-endian header length (2 bytes for 1.0, 4 for
// 2.0 / 3.0), the dict padded with spaces and ended by '\n' so that the data starts at 64 bytes.
std::string file_bytes(int major, const std::string& dict, const std::string& data, bool pad = true) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  if (pad) header.append((prefix + dict.size() + 1 + 63) / 64 * 64 - prefix - dict.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (std::size_t k = 0; k < prefix - 8; ++k) out += char((header.size() >> (8 * k)) & 0xff);
  return out + header + data;
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s += char(x);
  return s;
}

// The ConfigError's field when decoding `b` fails (the empty string if it does not).
std::string failing_field(const std::string& b) {
  try {
    decode_npy(b);
  } catch (const ConfigError& e) {
    return e.field();
  }
  return "";
}

std::string failing_message(const std::string& b) {
  try {
    decode_npy(b);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kDict23 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

std::string temp_dir() {
  char path[] = "/tmp/flashlab_npy_XXXXXX";
  REQUIRE(::mkdtemp(path) != nullptr);
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

bool have_numpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("encode_npy writes NumPy's version 1.0 layout: the dict padded to 64 bytes, then C-order data") {
  // 1.0f = 0x3f800000, fp16 1.0 = 0x3c00, bf16 1.0 = 0x3f80; -2.0: 0xc0000000, 0xc000, 0xc000.
  const NpyArray f4{NpyType::f4, {2, 3}, {1, 0, 0, 0, 0, -2}};
  const std::string zero4 = bytes({0, 0, 0, 0});
  CHECK(encode_npy(f4) ==
        file_bytes(1, kDict23, bytes({0, 0, 0x80, 0x3f}) + zero4 + zero4 + zero4 + zero4 + bytes({0, 0, 0, 0xc0})));
  CHECK(encode_npy(f4).size() == 128 + 24);  // 10 + 60 + 1 header bytes rounded up to 128
  const NpyArray f2{NpyType::f2, {2}, {1, -2}};
  CHECK(encode_npy(f2) == file_bytes(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }",
                                     bytes({0, 0x3c, 0, 0xc0})));
  const NpyArray u2{NpyType::u2, {1, 1, 1, 2}, {1, -2}};
  CHECK(encode_npy(u2) == file_bytes(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (1, 1, 1, 2), }",
                                     bytes({0x80, 0x3f, 0, 0xc0})));
  CHECK_THROWS_AS(encode_npy(NpyArray{NpyType::f4, {2, 2}, {1, 2, 3}}), ConfigError);
}

TEST_CASE("round trips: every element type, shapes of 0 to 4 dimensions, values the type holds exactly") {
  const float inf = std::numeric_limits<float>::infinity();
  for (NpyType t : {NpyType::f2, NpyType::f4, NpyType::u2}) {
    CAPTURE(std::string(npy_descr(t)));
    // values of fp16 and of bf16 alike (8 significant bits, |x| <= 65504), inf, -0, a subnormal of fp16
    const std::vector<float> values{0.5f, -3.25f, 65280.0f, -inf, -0.0f, 0x1.0p-24f, 1.0f, 2.0f};
    for (const std::vector<std::int64_t>& shape :
         std::vector<std::vector<std::int64_t>>{{8}, {2, 4}, {1, 2, 2, 2}, {4, 2}, {}, {0, 3}}) {
      std::int64_t n = 1;
      for (std::int64_t dim : shape) n *= dim;
      const NpyArray a{t, shape, std::vector<float>(values.begin(), values.begin() + n)};
      const std::string file = encode_npy(a);
      CHECK(file.size() % 64 == (std::size_t(n) * (t == NpyType::f4 ? 4 : 2)) % 64);
      const NpyArray b = decode_npy(file);
      CHECK(b.type == t);
      CHECK(b.shape == shape);
      REQUIRE(b.values.size() == a.values.size());
      for (std::size_t k = 0; k < a.values.size(); ++k) {
        CHECK(b.values[k] == a.values[k]);
        CHECK(std::signbit(b.values[k]) == std::signbit(a.values[k]));
      }
      CHECK(encode_npy(b) == file);
    }
  }
}

TEST_CASE("headers of versions 1.0, 2.0 and 3.0, in the spellings NumPy and Python allow") {
  const std::string data = bytes({0, 0, 0x80, 0x3f}) + std::string(20, '\0');  // 1, 0, 0, 0, 0, 0
  for (int major : {1, 2, 3}) {
    CAPTURE(major);
    for (const std::string& dict : {kDict23, std::string("{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<f4\"}"),
                                    std::string("{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 2 , 3 , ) }"),
                                    std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }")}) {
      CAPTURE(dict);
      for (bool pad : {true, false}) {  // older writers aligned to 16 bytes or not at all
        const NpyArray a = decode_npy(file_bytes(major, dict, data, pad));
        CHECK(a.type == NpyType::f4);
        CHECK(a.shape == std::vector<std::int64_t>{2, 3});
        CHECK(a.values == std::vector<float>{1, 0, 0, 0, 0, 0});
      }
    }
  }
  // 32 dimensions, NumPy's limit, and not one more
  const NpyArray wide{NpyType::f4, std::vector<std::int64_t>(32, 1), {7}};
  CHECK(decode_npy(encode_npy(wide)).values == std::vector<float>{7});
  std::string shape33;
  for (int k = 0; k < 33; ++k) shape33 += "1, ";
  CHECK(failing_field(file_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape33 + "), }",
                                 bytes({0, 0, 0, 0}))) == "npy shape");
}

TEST_CASE("malformed files are refused with the field they break, never read past their end") {
  const std::string good = file_bytes(1, kDict23, std::string(24, '\0'));
  REQUIRE(failing_field(good).empty());
  // every truncation of a good file
  for (std::size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    const std::string field = failing_field(good.substr(0, n));
    CHECK((field == "npy magic" || field == "npy header" || field == "npy data"));
  }
  CHECK(failing_message(good.substr(0, good.size() - 1)) ==
        "npy data = 23 bytes: 24 bytes for shape (2, 3) of '<f4' (the file is truncated)");
  CHECK(failing_message(good + "x") == "npy data = 25 bytes: 24 bytes for shape (2, 3) of '<f4' (bytes after the data)");
  CHECK(failing_field("\x93NUMPZ" + good.substr(6)) == "npy magic");
  CHECK(failing_field("PK\x03\x04 a zip file, not an array") == "npy magic");
  std::string v = good;
  v[6] = 4;
  CHECK(failing_message(v) == "npy version = 4.0: 1.0, 2.0 or 3.0");
  v[6] = 1;
  v[7] = 1;
  CHECK(failing_field(v) == "npy version");

  const auto with_dict = [](const std::string& dict) { return file_bytes(1, dict, std::string(24, '\0')); };
  CHECK(failing_message(with_dict("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }")) ==
        "npy fortran_order = True: False: the elements in C order (row-major)");
  CHECK(failing_message(with_dict("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }"))
            .rfind("npy descr = '>f4' (big-endian): little-endian", 0) == 0);
  CHECK(failing_message(with_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }")) ==
        "npy descr = '<f8': '<f2' (fp16), '<f4' (fp32) or '<u2' (bf16 bits)");
  for (const std::string& dict :
       {std::string("{'descr': '<f4', 'fortran_order': False}"),                          // no shape
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}"),  // unknown key
        std::string("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"),
        std::string("['descr', '<f4']"), std::string("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}"),
        std::string("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}"),
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}"),
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} trailing"), std::string("")}) {
    CAPTURE(dict);
    CHECK(failing_field(with_dict(dict)) == "npy header");
  }
  CHECK(failing_field(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 2)}")) ==
        "npy shape");
  CHECK(failing_field(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}")) ==
        "npy shape");
  // a header length beyond the file, and beyond 1 MiB
  std::string longer = good;
  longer[8] = char(0xff);
  longer[9] = char(0xff);
  CHECK(failing_field(longer) == "npy header");
  std::string huge = file_bytes(2, kDict23, std::string(24, '\0'));
  huge[11] = 1;  // 2^24 + ...
  CHECK(failing_message(huge).find("at most 1 MiB") != std::string::npos);
}

TEST_CASE("read_npy names the file, refuses what is not a regular file, checks the size before reading") {
  const std::string dir = temp_dir(), path = dir + "/x.npy";
  { std::ofstream(path, std::ios::binary) << file_bytes(1, kDict23, std::string(24, '\0')); }
  CHECK(read_npy(path).shape == std::vector<std::int64_t>{2, 3});
  { std::ofstream(path, std::ios::binary) << file_bytes(1, kDict23, std::string(20, '\0')); }
  CHECK_THROWS_WITH_AS(read_npy(path), (path + ": npy data = 20 bytes: 24 bytes for shape (2, 3) of '<f4' (the file "
                                               "is truncated)").c_str(),
                       ConfigError);
  CHECK_THROWS_WITH_AS(read_npy(dir + "/missing.npy"),
                       ("npy file = " + dir + "/missing.npy: a readable NumPy .npy file (No such file or directory)").c_str(),
                       ConfigError);
  CHECK_THROWS_WITH_AS(read_npy("/dev/zero"), "npy file = /dev/zero: a readable NumPy .npy file (not a regular file)",
                       ConfigError);
  CHECK_THROWS_AS(read_npy(dir), ConfigError);
  // a FIFO with no writer: refused by kind at once (opening it for reading would wait for a writer)
  const std::string fifo = dir + "/fifo.npy";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(read_npy(fifo), ("npy file = " + fifo + ": a readable NumPy .npy file (not a regular file)").c_str(),
                       ConfigError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("NumPy reads what encode_npy writes and writes what read_npy reads (versions 1.0, 2.0, 3.0)") {
  if (!have_numpy()) {
    MESSAGE("/usr/bin/python3 has no numpy (apt-get install python3-numpy): the independent check is skipped");
    return;
  }
  const std::string dir = temp_dir();
  // NumPy writes: arange(12) / 4 - 1 as fp16, fp32, and bf16 bits (fp32's upper 16 bits: exact for these)
  const std::string script = dir + "/write.py";
  {
    std::ofstream py(script);
    py << "import numpy as np, sys\n"
          "d = sys.argv[1]\n"
          "x = (np.arange(12, dtype=np.float32) / 4 - 1).reshape(1, 2, 3, 2)\n"
          "bf = (x.view(np.uint32) >> 16).astype('<u2')\n"
          "for v in [(1, 0), (2, 0), (3, 0)]:\n"
          "    for name, a in [('f2', x.astype('<f2')), ('f4', x.astype('<f4')), ('u2', bf)]:\n"
          "        with open(f'{d}/{name}_v{v[0]}.npy', 'wb') as f:\n"
          "            np.lib.format.write_array(f, a, version=v)\n";
  }
  REQUIRE(std::system(("/usr/bin/python3 " + script + " " + dir).c_str()) == 0);
  for (int v : {1, 2, 3})
    for (const char* name : {"f2", "f4", "u2"}) {
      CAPTURE(v);
      CAPTURE(name);
      const NpyArray a = read_npy(dir + "/" + name + "_v" + std::to_string(v) + ".npy");
      CHECK(std::string(npy_descr(a.type)) == std::string("<") + name);
      CHECK(a.shape == std::vector<std::int64_t>{1, 2, 3, 2});
      REQUIRE(a.values.size() == 12);
      for (int k = 0; k < 12; ++k) CHECK(a.values[std::size_t(k)] == float(k) / 4 - 1);
    }
  // NumPy reads: the same values written here, compared by NumPy with its own arange
  for (NpyType t : {NpyType::f2, NpyType::f4, NpyType::u2}) {
    NpyArray a{t, {3, 4}, {}};
    for (int k = 0; k < 12; ++k) a.values.push_back(float(k) / 4 - 1);
    const std::string path = dir + "/mine_" + std::string(npy_descr(t)).substr(1) + ".npy";
    std::ofstream(path, std::ios::binary) << encode_npy(a);
    const std::string check =
        "/usr/bin/python3 -c \"import numpy as np, sys; a = np.load(sys.argv[1]); "
        "x = a.astype(np.uint32) << 16 if a.dtype == np.uint16 else a; x = x.view(np.float32) if a.dtype == np.uint16 else x; "
        "ok = a.shape == (3, 4) and a.dtype.str == sys.argv[2] and np.array_equal(x.ravel(), np.arange(12) / 4 - 1); "
        "sys.exit(0 if ok else 1)\" " + path + " '" + std::string(npy_descr(t)) + "'";
    CAPTURE(check);
    CHECK(std::system(check.c_str()) == 0);
  }
  std::filesystem::remove_all(dir);
}
