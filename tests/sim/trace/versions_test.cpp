// Events carry the launch they belong to (format version 2), version-1 files, which do not record
// it, still read, and so do version-2 files, which numbered the tensor `none` 9 before version 3
// added the backward's tensors: docs/events.md "The record" and "Versions".
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/diff.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;
using test::rejects;

namespace {

// The launch of a standard-attention event, from FA1 Algorithm 0 alone: launch 0 computes
// S = Q K^T (line 1: load Q, load K, scores, store S), launch 1 P = softmax(S) (line 2: load S,
// softmax, store P), launch 2 O = P V (line 3: load P, load V, output, store O).
int standard_launch(const Event& e) {
  if (e.op == Op::compute) return e.eq == Eq::scores ? 0 : e.eq == Eq::softmax_dense ? 1 : e.eq == Eq::output_dense ? 2 : -1;
  if (e.op == Op::load) return e.tensor == Tensor::Q || e.tensor == Tensor::K ? 0 : e.tensor == Tensor::S ? 1 : 2;
  if (e.op == Op::store) return e.tensor == Tensor::S ? 0 : e.tensor == Tensor::P ? 1 : e.tensor == Tensor::O ? 2 : -1;
  return -1;
}

Trace sample(Algo a, TraceLevel level, bool stats) {
  Config c = test::small(a, 37, 29, 8, 8, 6, Mask{MaskKind::causal_br, 0, 0});
  c.warps = 3;
  if (a != Algo::standard) c.split = WarpSplit::split_k;  // standard attention takes no warp split
  const Problem p = resolve(c);
  Trace t = record_trace(p, level);
  if (stats) add_stats(t, p, {0, 4}, InputSpec{"random", "index", "0.5", 7});
  return t;
}

// The same file as format version 1 wrote it: version 1, no launch field (text: the first field of
// each event line gone; binary: the two bytes at offset 38 of each record were pad, 0).
std::string as_v1(const std::string& file, std::size_t events) {
  if (file.rfind("FLTRACE", 0) == 0) {
    std::string b = file;
    const std::uint32_t one = 1;
    std::memcpy(b.data() + 8, &one, 4);
    std::uint32_t h = 0;
    std::memcpy(&h, b.data() + 12, 4);
    for (std::size_t k = 0; k < events; ++k) {
      b[16 + h + 8 + 40 * k + 38] = b[16 + h + 8 + 40 * k + 39] = 0;
      if (b[16 + h + 8 + 40 * k + 33] == char(Tensor::none)) b[16 + h + 8 + 40 * k + 33] = 9;  // none before version 3
    }
    return b;
  }
  std::string out = "flashlab-trace text 1\n";
  std::size_t at = file.find('\n') + 1;
  const std::size_t ev = file.find("\nevents\n") + 8;
  out += file.substr(at, ev - at);
  at = ev;
  for (std::size_t k = 0; k < events; ++k) {
    const std::size_t sp = file.find(' ', at), nl = file.find('\n', at);
    out += file.substr(sp + 1, nl + 1 - (sp + 1));
    at = nl + 1;
  }
  return out + file.substr(at);
}

}  // namespace

TEST_CASE("events carry their launch: standard attention's S, softmax and PV are launches 0, 1, 2, V1 and V2 one") {
  for (TraceLevel level : {TraceLevel::block, TraceLevel::warp}) {
    CAPTURE(to_string(level));
    const Trace s = sample(Algo::standard, level, false);
    REQUIRE(s.events.size() == 11);  // 4 + 3 + 4 (FA1 Alg. 0; no warp events in standard attention)
    int last = 0;
    for (const Event& e : s.events) {
      CAPTURE(event_line(e));
      CHECK(int(e.launch) == standard_launch(e));
      CHECK(int(e.launch) >= last);  // stream order: by launch first
      last = e.launch;
    }
    for (Algo a : {Algo::v1, Algo::v2})
      for (const Event& e : sample(a, level, false).events) CHECK(e.launch == 0);
  }
}

// The same file as format version 2 wrote it: version 2, the tensor `none` numbered 9.
std::string as_v2(const std::string& file, std::size_t events) {
  std::string b = file;
  if (file.rfind("FLTRACE", 0) == 0) {
    const std::uint32_t two = 2;
    std::memcpy(b.data() + 8, &two, 4);
    std::uint32_t h = 0;
    std::memcpy(&h, b.data() + 12, 4);
    for (std::size_t k = 0; k < events; ++k)
      if (b[16 + h + 8 + 40 * k + 33] == char(Tensor::none)) b[16 + h + 8 + 40 * k + 33] = 9;
    return b;
  }
  return "flashlab-trace text 2" + b.substr(b.find('\n'));
}

TEST_CASE("format version 6: the text form shows the launch first, the binary record holds it at offset 38") {
  const Trace s = sample(Algo::standard, TraceLevel::block, false);
  const std::string text = encode_trace(s, TraceFormat::text);
  CHECK(text.rfind("flashlab-trace text 6\n", 0) == 0);
  // N_q = 37, N_k = 29, fp16: P is 37 x 29 x 2 bytes, written by launch 1 (step 1)
  CHECK(text.find("\n1 0 1 store P -1 -1 37 29 2146 -1 -\n") != std::string::npos);
  CHECK(text.find("\n2 0 2 compute - -1 -1 37 29 0 -1 output_dense\n") != std::string::npos);  // over P
  const std::string bin = encode_trace(s, TraceFormat::binary);
  std::uint32_t version = 0, h = 0;
  std::memcpy(&version, bin.data() + 8, 4);
  std::memcpy(&h, bin.data() + 12, 4);
  CHECK(version == 6);
  CHECK(std::uint8_t(bin[16 + h + 8 + 40 * 2 + 33]) == 19);  // the third record, compute scores: tensor none
  std::uint16_t launch = 0;
  std::memcpy(&launch, bin.data() + 16 + h + 8 + 40 * 10 + 38, 2);  // the last record: store O, launch 2
  CHECK(launch == 2);
}

TEST_CASE("docs/events.md and the README name the version the writers put at byte 8 of a binary file") {
  const Trace s = sample(Algo::v2, TraceLevel::block, false);
  const std::string bin = encode_trace(s, TraceFormat::binary);
  std::uint32_t version = 0;
  std::memcpy(&version, bin.data() + 8, 4);
  const std::string v = std::to_string(version), older = std::to_string(version - 1);
  auto read = [](const std::string& rel) {
    std::ifstream in(std::string(FLASHLAB_SOURCE_DIR) + "/" + rel);
    REQUIRE(in);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string events = read("docs/events.md"), readme = read("README.md");
  CHECK(events.rfind("# Events and trace files (format version " + v + ")\n", 0) == 0);
  CHECK(events.find("| 8 | 4 | u32 version = " + v + " (the version written; 1 to " + older + " are read") != std::string::npos);
  CHECK(events.find("Readers read versions 1 to " + v + " and write " + v + ".") != std::string::npos);
  CHECK(readme.find("(docs/events.md): format " + v + "; versions 1 to " + older + " still read)") != std::string::npos);
}

TEST_CASE("docs/events.md's record table names every tensor code the writers put at byte 33") {
  // issue 24: the table named 17 "none" after format 5 wrote Oacc, Lacc there and none as 19
  std::string row = "| 33 | `tensor` | u8 | ";
  for (int k = 0; k <= int(Tensor::none); ++k)  // the text form writes none as "-"
    row += (k ? ", " : "") + std::to_string(k) + " " + (Tensor(k) == Tensor::none ? "none" : std::string(to_string(Tensor(k))));
  std::ifstream in(std::string(FLASHLAB_SOURCE_DIR) + "/docs/events.md");
  REQUIRE(in);
  const std::string events(std::istreambuf_iterator<char>(in), {});
  CHECK_MESSAGE(events.find(row + " (text: `-`") != std::string::npos, row);
}

TEST_CASE("version-1 files read: standard attention's launch is its step, every other algorithm's 0") {
  for (Algo a : {Algo::standard, Algo::v1, Algo::v2})
    for (TraceLevel level : {TraceLevel::block, TraceLevel::warp})
      for (bool stats : {false, true})
        for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
          CAPTURE(to_string(a));
          CAPTURE(to_string(level));
          CAPTURE(to_string(f));
          const Trace t = sample(a, level, stats);
          const std::string v1 = as_v1(encode_trace(t, f), t.events.size());
          REQUIRE(v1 != encode_trace(t, f));
          const Trace back = decode_trace(v1);
          CHECK(test::same_trace(back, t));  // launches as the simulator records them
          CHECK(encode_trace(back, f) == encode_trace(t, f));  // written back as version 6
        }
}

TEST_CASE("version-2 files read: the tensor byte 9 is none, bytes of version 3's tensors are refused") {
  for (Algo a : {Algo::standard, Algo::v1, Algo::v2})
    for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
      CAPTURE(to_string(a));
      CAPTURE(to_string(f));
      const Trace t = sample(a, TraceLevel::warp, true);
      const std::string v2 = as_v2(encode_trace(t, f), t.events.size());
      REQUIRE(v2 != encode_trace(t, f));
      CHECK(test::same_trace(decode_trace(v2), t));
    }
  // a backward trace's dO in a version-2 file: no such tensor then
  Config c = test::small(Algo::v2, 8, 8, 4, 4, 4, Mask{});
  c.pass = Pass::backward;
  const Trace t = record_trace(resolve(c), TraceLevel::block);
  const std::string text = as_v2(encode_trace(t, TraceFormat::text), t.events.size());
  // (event 1 loads dO: tensor 9, which the binary form of version 2 reads as none; event 2 computes
  // D, an equation version 2 did not have)
  rejects(text, "tensor = 9: Q K V O l m L S P or none in format version 2");
  rejects(as_v2(encode_trace(t, TraceFormat::binary), t.events.size()), "eq = 12: 0 to 11");
}

// The same file as format version 3 wrote it: version 3, the tensor `none` numbered 17.
std::string as_v3(const std::string& file, std::size_t events) {
  std::string b = file;
  if (file.rfind("FLTRACE", 0) == 0) {
    const std::uint32_t three = 3;
    std::memcpy(b.data() + 8, &three, 4);
    std::uint32_t h = 0;
    std::memcpy(&h, b.data() + 12, 4);
    for (std::size_t k = 0; k < events; ++k) {
      char& t = b[16 + h + 8 + 40 * k + 33];
      if (t == char(Tensor::none)) t = 17;
    }
    return b;
  }
  return "flashlab-trace text 3" + b.substr(b.find('\n'));
}

TEST_CASE("version-3 files read: the tensor byte 17 is none, split-KV's tensors and equations are refused") {
  for (Algo a : {Algo::standard, Algo::v1, Algo::v2})
    for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
      CAPTURE(to_string(a));
      CAPTURE(to_string(f));
      const Trace t = sample(a, TraceLevel::warp, true);
      const std::string v3 = as_v3(encode_trace(t, f), t.events.size());
      REQUIRE(v3 != encode_trace(t, f));
      CHECK(test::same_trace(decode_trace(v3), t));
    }
  // a backward trace reads as version 3 unchanged (its tensors 9..16 are version 3's)
  Config b = test::small(Algo::v2, 8, 8, 4, 4, 4, Mask{});
  b.pass = Pass::backward;
  const Trace tb = record_trace(resolve(b), TraceLevel::block);
  CHECK(test::same_trace(decode_trace(as_v3(encode_trace(tb, TraceFormat::binary), tb.events.size())), tb));
  // a split-KV trace: its first Oacc store is no tensor of version 3 (text: 17 = Oacc; binary:
  // 17 reads as none, 18 = Lacc as no tensor), its finalize_split no equation
  Config c = test::small(Algo::v2, 8, 8, 4, 4, 4, Mask{});
  c.splits = 2;
  const Trace t = record_trace(resolve(c), TraceLevel::block);
  rejects(as_v3(encode_trace(t, TraceFormat::text), t.events.size()), "eq = 28: 0 to 27");
  rejects(as_v3(encode_trace(t, TraceFormat::binary), t.events.size()), "eq = 28: 0 to 27");
}

TEST_CASE("a version-1 record's launch bytes were pad: non-zero is refused, version 2's pad byte too") {
  const Trace t = sample(Algo::v2, TraceLevel::block, false);
  const std::string v2 = encode_trace(t, TraceFormat::binary);
  const std::string v1 = as_v1(v2, t.events.size());
  std::uint32_t h = 0;
  std::memcpy(&h, v2.data() + 12, 4);
  const std::size_t first = 16 + h + 8;
  for (std::size_t at : {first + 38, first + 39}) {
    std::string b = v1;
    b[at] = 1;
    rejects(b, "trace event 0 pad = non-zero: three zero bytes at offsets 37-39 (format version 1)");
  }
  std::string b = v2;
  b[first + 37] = 1;
  rejects(b, "trace event 0 pad = 1: a zero byte at offset 37");
  b = v2;
  b[first + 39] = 1;  // launch 256: V2 has one launch (docs/events.md "Validity")
  rejects(b, "trace event 0 launch = 256: a launch of algo v2's schedule, 0 to 0");
  // a version-1 text line has no launch field: a version-2 line in a version-1 file is refused
  const std::string text = as_v1(encode_trace(t, TraceFormat::text), t.events.size());
  const std::size_t ev = text.find("events\n") + 7;
  rejects(text.substr(0, ev) + "0 " + text.substr(ev), "trace text line 4 op = 0");
}

TEST_CASE("diff: traces that differ only in an event's launch differ, and the report shows where") {
  const Trace a = sample(Algo::standard, TraceLevel::block, false);
  Trace b = a;
  REQUIRE(b.events[5].eq == Eq::softmax_dense);
  b.events[5].launch = 0;  // the softmax computed in launch 0 (step 1): in a (launch, block, step) group A has not
  const DiffResult r = diff_traces(a, b);
  CHECK_FALSE(r.agree());
  REQUIRE(r.first.has_value());
  CHECK(r.first->launch == 0);
  CHECK(r.first->step == 1);
  CHECK_FALSE(r.first->a.has_value());
  REQUIRE(r.first->b.has_value());
  CHECK(r.first->b->eq == Eq::softmax_dense);
  // group (1, 0, 1): A has load S, compute, store P; B load S, store P: two positions differ
  CHECK(r.differing_events == 3);
  CHECK(r.differing_steps == 2);
  const std::string report = format_diff(r);
  CHECK(report.find("first divergence: launch 0, block 0, step 1, event 0 of the step") != std::string::npos);
  CHECK(report.find("B: 0 0 1 compute - -1 -1 37 29 0 -1 softmax_dense") != std::string::npos);
  Event x = a.events[0], y = x;
  y.launch = 1;
  CHECK(event_field_differences(x, y) == std::vector<std::string>{"launch"});
  CHECK_FALSE(same_event(x, y));
}
