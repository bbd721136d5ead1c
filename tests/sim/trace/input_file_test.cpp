// What read_trace refuses before it reads a file's contents (issue 9 item 4): anything that is not
// a regular file, and a file larger than any trace of the config in its own header.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;
namespace fs = std::filesystem;
using test::error_of;
using test::fresh_dir;

namespace {

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

Trace sample(Algo a, TraceLevel level) {
  Config c = test::small(a, 37, 29, 8, 8, 6, Mask{MaskKind::causal_br, 0, 0});
  c.warps = 3;
  if (a != Algo::standard) c.split = WarpSplit::split_k;  // standard attention takes no warp split
  return record_trace(resolve(c), level);
}

}  // namespace

TEST_CASE("read_trace refuses a device, a directory and a FIFO without reading (or waiting on) them") {
  const std::string dir = fresh_dir("flashlab_input_file_test");
  std::string e;
  // Before: /dev/zero was read until memory ran out (2.1 GB, 18 s, std::bad_alloc).
  CHECK(seconds_of([&] { e = error_of([] { read_trace("/dev/zero"); }); }) < 5);
  CHECK(e == "trace file = /dev/zero: a readable regular file (it is a character device)");
  CHECK(error_of([&] { read_trace(dir); }) == "trace file = " + dir + ": a readable regular file (it is a directory)");
  const std::string fifo = dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Opening a FIFO for reading waits for a writer unless told not to: this must return at once.
  CHECK(seconds_of([&] { e = error_of([&] { read_trace(fifo); }); }) < 5);
  CHECK(e == "trace file = " + fifo + ": a readable regular file (it is a FIFO)");
  CHECK(error_of([&] { read_trace(dir + "/missing"); }).find("No such file") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("max_trace_file_bytes is at least every real trace of the config, with the GPU recorder's slack") {
  for (Algo a : {Algo::standard, Algo::v1, Algo::v2})
    for (TraceLevel level : {TraceLevel::block, TraceLevel::warp})
      for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
        CAPTURE(to_string(a));
        CAPTURE(to_string(level));
        CAPTURE(to_string(f));
        Trace t = sample(a, level);
        const Problem p = trace_problem(t.header);
        std::vector<std::int64_t> all;  // statistics of every Q block
        for (std::int64_t i = 0; i < p.tiling.t_r(); ++i) all.push_back(i);
        add_stats(t, p, all, InputSpec{"random", "index", "0.5", 7});
        const std::uint64_t limit = max_trace_file_bytes(t.header, f);
        CHECK(encode_trace(t, f).size() <= limit);
        // a faulty kernel's trace: kTraceEventSlack more events, every field at its widest
        Event wide;
        wide.launch = 65535;
        wide.block = wide.step = wide.rows = wide.cols = 4294967295u;
        wide.i = wide.j = -2147483647 - 1;
        wide.bytes = ~std::uint64_t(0);
        wide.warp = -32768;
        wide.op = Op::barrier;
        wide.eq = Eq::softmax_dense;
        for (Event& e : t.events) e = wide;
        t.events.insert(t.events.end(), kTraceEventSlack, wide);
        t.header.level = TraceLevel::warp;  // warp = -32768 is not allowed in a block-level trace
        CHECK(encode_trace(t, f).size() + t.events.size() <= limit);  // and a "\r" before every "\n"
      }
}

TEST_CASE("read_trace refuses a file larger than a trace of its config can be, before reading past the header") {
  const std::string dir = fresh_dir("flashlab_input_file_test");
  const Trace t = sample(Algo::v2, TraceLevel::block);
  for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
    CAPTURE(to_string(f));
    const std::string good = encode_trace(t, f), path = dir + "/big.trace";
    const std::uint64_t limit = max_trace_file_bytes(t.header, f);
    // one byte over the limit: refused by size (the decoder would say "after the end")
    write_file(path, good + std::string(limit + 1 - good.size(), '\n'));
    CHECK(error_of([&] { read_trace(path); }) ==
          path + ": trace file size = " + std::to_string(limit + 1) + " bytes: at most " + std::to_string(limit) +
              " bytes, the largest a " + std::string(to_string(f)) + " trace of its config can be (docs/events.md \"Validity\")");
    // at the limit: read, and refused by the decoder for what follows the end
    write_file(path, good + std::string(limit - good.size(), '\n'));
    CHECK(error_of([&] { read_trace(path); }).find("trace file size") == std::string::npos);
    // a sparse 64 GiB file with a valid start: refused at once, without reading 64 GiB
    write_file(path, good);
    REQUIRE(::truncate(path.c_str(), off_t(1) << 36) == 0);
    std::string e;
    CHECK(seconds_of([&] { e = error_of([&] { read_trace(path); }); }) < 5);
    CHECK(e.find("trace file size = 68719476736 bytes") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("a text header line longer than the cap is refused as too long, in a file or in memory") {
  const Trace t = sample(Algo::v2, TraceLevel::block);
  const std::string text = encode_trace(t, TraceFormat::text);
  const std::string json = test::header_text(t);
  // a command of 1 MiB: the header line is over the cap, and the file is longer than what
  // read_trace reads first (kMaxTraceHeaderBytes + 64 bytes)
  const std::string huge = test::with_header_json(
      text, test::replaced(json, "{", "{\"command\":\"" + std::string(kMaxTraceHeaderBytes, 'x') + "\","));
  const std::string expected = "trace header size = more than 1048576 bytes: at most 1048576 bytes";
  CHECK(error_of([&] { decode_trace(huge); }) == expected);
  const std::string dir = fresh_dir("flashlab_input_file_test"), path = dir + "/long.trace";
  write_file(path, huge);
  CHECK(error_of([&] { read_trace(path); }) == path + ": " + expected);
  fs::remove_all(dir);
}
