// The trace writers' destinations (trace/output_file.hpp): special files refused and left untouched,
// symbolic links followed, a missing folder reported against the path given; write_output_file on a
// full file system (a filled tmpfs) and past a file-size limit: an error, and no file left.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/output_file.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "../../common/full_fs.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;
namespace fs = std::filesystem;
using test::error_of;
using test::fresh_dir;

namespace {

Trace sample() { return record_trace(resolve(test::small(Algo::v2, 20, 12, 4, 8, 4)), TraceLevel::block); }

}  // namespace

TEST_CASE("output_path: regular files and new names pass, special files are refused by kind") {
  const std::string dir = fresh_dir("flashlab_output_test"), fifo = dir + "/pipe", file = dir + "/file";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::ofstream(file) << "x";
  const OutputPath plain = output_path(file);
  CHECK(plain.target == file);
  CHECK(plain.temp == file + ".tmp-" + std::to_string(::getpid()));
  CHECK(output_path(dir + "/new").target == dir + "/new");
  CHECK(error_of([&] { output_path(fifo); }) == "output = " + fifo + ": a regular file path (it is a FIFO)");
  CHECK(error_of([&] { output_path(dir); }) == "output = " + dir + ": a regular file path (it is a directory)");
  fs::create_symlink(fifo, dir + "/to_pipe");
  CHECK(error_of([&] { output_path(dir + "/to_pipe"); }) ==
        "output = " + dir + "/to_pipe: a regular file path (it is a symbolic link to a FIFO)");
  fs::remove_all(dir);
}

TEST_CASE("write_trace and TraceFileWriter leave a FIFO alone and write through a symbolic link") {
  const std::string dir = fresh_dir("flashlab_output_test");
  const std::string fifo = dir + "/pipe", real = dir + "/real.trace", link = dir + "/link.trace";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const Trace t = sample();
  const Problem p = trace_problem(t.header);
  CHECK_THROWS_AS(write_trace(fifo, t, TraceFormat::binary), ConfigError);
  CHECK_THROWS_AS(TraceFileWriter(fifo, p, t.header, TraceFormat::text), ConfigError);
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));

  std::ofstream(real) << "old";
  fs::create_symlink("real.trace", link);
  write_trace(link, t, TraceFormat::text);
  CHECK(fs::is_symlink(link));
  CHECK(test::same_trace(read_trace(real), t));
  {
    TraceFileWriter w(link, p, t.header, TraceFormat::binary);
    w.add_events(t.events);
    w.finish();
  }
  CHECK(fs::is_symlink(link));
  CHECK(test::same_trace(read_trace(real), t));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 3);  // pipe, real, link
  fs::remove_all(dir);
}

TEST_CASE("a trace in a missing folder: ConfigError naming the path given") {
  const std::string path = fresh_dir("flashlab_output_test") + "/no/such/x.trace";
  CHECK(error_of([&] { write_trace(path, sample(), TraceFormat::text); }) ==
        "output = " + path + ": a file path that can be created (No such file or directory)");
  fs::remove_all(fs::path(path).parent_path().parent_path().parent_path());
}

namespace {

// write_output_file of `size` bytes to dir/out.bin: the error it threw ("" when none), then " | "
// and what is left in dir.
std::string write_and_list(const std::string& dir, std::size_t size) {
  std::string error;
  try {
    write_output_file(dir + "/out.bin", std::string(size, 'x'));
  } catch (const std::exception& e) {
    error = e.what();
  }
  return error + " | " + test::listing(dir);
}

}  // namespace

TEST_CASE("write_output_file on a full file system: an error naming the path, and no file left") {
  const std::string dir = fresh_dir("flashlab_output_test");
  for (std::size_t size : {std::size_t(100), std::size_t(100'000)}) {  // failing at the close, at a write
    CAPTURE(size);
    const std::string r = test::in_full_tmpfs(dir, [&] { return write_and_list(dir, size); });
    if (r.rfind("unavailable", 0) == 0) {
      MESSAGE("skipped, no tmpfs: " << r);
      break;
    }
    CHECK(r == "cannot write " + dir + "/out.bin: No space left on device | filler");
  }
  fs::remove_all(dir);
}

TEST_CASE("write_output_file past the file-size limit: an error naming the path, and no file left") {
  const std::string dir = fresh_dir("flashlab_output_test");
  CHECK(test::with_file_size_limit(4096, [&] { return write_and_list(dir, 100'000); }) ==
        "cannot write " + dir + "/out.bin: File too large | ");
  CHECK(test::with_file_size_limit(4096, [&] { return write_and_list(dir, 4096); }) == " | out.bin");
  CHECK(fs::file_size(dir + "/out.bin") == 4096);
  fs::remove_all(dir);
}

TEST_CASE("write_output_files: the set whole or none of it, a file that does not fit removes the ones written before it") {
  const std::string dir = fresh_dir("flashlab_output_test");
  const auto write_set = [&](std::size_t last) {
    std::string error;
    try {
      write_output_files({{dir + "/a.bin", std::string(100, 'a')}, {dir + "/b.bin", std::string(4000, 'b')},
                          {dir + "/c.bin", std::string(last, 'c')}});
    } catch (const std::exception& e) {
      error = e.what();
    }
    return error + " | " + test::listing(dir);
  };
  // c.bin past the 4 KiB limit: a.bin and b.bin, complete as temporaries, are not renamed into place
  CHECK(test::with_file_size_limit(4096, [&] { return write_set(5000); }) ==
        "cannot write " + dir + "/c.bin: File too large | ");
  // a file already there is left as it was
  write_output_file(dir + "/a.bin", "old");
  CHECK(test::with_file_size_limit(4096, [&] { return write_set(5000); }) ==
        "cannot write " + dir + "/c.bin: File too large | a.bin");
  CHECK(fs::file_size(dir + "/a.bin") == 3);
  // within the limit all three land
  CHECK(test::with_file_size_limit(4096, [&] { return write_set(4096); }) == " | a.bin b.bin c.bin");
  CHECK(fs::file_size(dir + "/c.bin") == 4096);
  CHECK(fs::file_size(dir + "/a.bin") == 100);
  fs::remove_all(dir);
}
