// Malformed, truncated and hostile trace files: a ConfigError that says what is wrong, never a
// crash, a hang or an allocation the file's size does not justify.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;
using test::rejects;

namespace {

Trace sample() {
  Config c = test::small(Algo::v2, 9, 7, 4, 4, 4, Mask{MaskKind::causal_tl, 0, 0});
  c.warps = 2;
  const Problem p = resolve(c);
  Trace t = record_trace(p, TraceLevel::warp);
  add_stats(t, p, {1}, InputSpec{});
  return t;
}

template <class T>
void poke(std::string& s, std::size_t at, T v) {
  std::memcpy(s.data() + at, &v, sizeof v);
}

// Offsets in the binary form (docs/events.md "Binary form").
constexpr std::size_t kVersionAt = 8, kHeaderSizeAt = 12, kHeaderAt = 16;

}  // namespace

TEST_CASE("every truncation of either form is rejected") {
  const Trace t = sample();
  for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
    const std::string full = encode_trace(t, f);
    for (std::size_t n = 0; n < full.size(); ++n) {
      CAPTURE(n);
      CHECK_THROWS_AS(decode_trace(std::string_view(full).substr(0, n)), ConfigError);
    }
  }
}

TEST_CASE("bad magic, bad version") {
  const std::string bin = encode_trace(sample(), TraceFormat::binary);
  const std::string txt = encode_trace(sample(), TraceFormat::text);
  rejects("GIF89a......", "trace magic");
  rejects("", "trace magic");
  for (std::uint32_t v : {0u, 7u}) {
    std::string b = bin;
    poke<std::uint32_t>(b, kVersionAt, v);
    rejects(b, "version = " + std::to_string(v) + ": version 1, 2, 3, 4, 5 or 6 (this build writes 6)");
  }
  std::string x = txt;
  x.replace(x.find(" 6\n"), 3, " 9\n");
  rejects(x, "version = 9: version 1, 2, 3, 4, 5 or 6");
}

TEST_CASE("absurd counts and sizes are refused before anything is allocated") {
  const Trace t = sample();
  const std::string bin = encode_trace(t, TraceFormat::binary);
  std::uint32_t header_size;
  std::memcpy(&header_size, bin.data() + kHeaderSizeAt, 4);
  const std::size_t count_at = kHeaderAt + header_size;
  {
    std::string b = bin;
    poke<std::uint32_t>(b, kHeaderSizeAt, 0xfffffff0u);
    rejects(b, "header size");
  }
  {
    std::string b = bin;
    poke<std::uint32_t>(b, kHeaderSizeAt, header_size + 100);
    rejects(b, "trace");
  }
  for (std::uint64_t n : {std::uint64_t(1) << 60, ~std::uint64_t(0)}) {
    std::string b = bin;
    poke<std::uint64_t>(b, count_at, n);
    rejects(b, "event count");
  }
  {  // one record more than written: the statistics are read as a record, or the file ends early
    std::string b = bin;
    poke<std::uint64_t>(b, count_at, t.events.size() + 1);
    rejects(b, "trace");
  }
  const std::size_t stats_at = count_at + 8 + t.events.size() * sizeof(Event);
  {
    std::string b = bin;
    poke<std::uint32_t>(b, stats_at, 0xffffffffu);
    rejects(b, "statistics count");
  }
  {
    std::string b = bin;
    poke<std::int64_t>(b, stats_at + 4, 99);  // Q block 99 of a 3-block config
    rejects(b, "statistics block");
  }
  {
    std::string b = bin;
    poke<std::uint32_t>(b, stats_at + 12, 0xffffffffu);  // snapshot count
    rejects(b, "trace binary");
  }
  {
    std::string b = bin;
    poke<std::uint32_t>(b, stats_at + 16 + 4 + 8, 1u << 30);  // rows of the first snapshot
    rejects(b, "snapshot rows");
  }
  std::string txt = encode_trace(t, TraceFormat::text);
  txt.replace(txt.find("stats 1\n"), 8, "stats 18446744073709551615\n");
  rejects(txt, "count");
}

TEST_CASE("bad records: enums out of range, pad bytes, warp events in a block-level trace") {
  const Trace t = sample();
  const std::string bin = encode_trace(t, TraceFormat::binary);
  std::uint32_t header_size;
  std::memcpy(&header_size, bin.data() + kHeaderSizeAt, 4);
  const std::size_t first = kHeaderAt + header_size + 8;  // the first record
  const struct {
    std::size_t offset;
    std::uint8_t value;
    const char* needle;
  } pokes[] = {{32, std::uint8_t(kOpCount), "op"}, {33, std::uint8_t(int(Tensor::none) + 1), "tensor"},
               {36, std::uint8_t(kEqCount), "eq"}, {37, 1, "pad"}};
  for (const auto& pk : pokes) {
    std::string b = bin;
    b[first + pk.offset] = char(pk.value);
    rejects(b, pk.needle);
  }
  {
    std::string b = bin;
    poke<std::int16_t>(b, first + 34, -2);
    rejects(b, "warp");
  }
  Trace block = record_trace(trace_problem(t.header), TraceLevel::block);
  block.events[3].warp = 0;
  rejects(encode_trace(block, TraceFormat::binary), "block-level");
  rejects(encode_trace(block, TraceFormat::text), "block-level");
  // tile indices outside the config's T_r x T_c, and bytes on a skip event: a corrupted record is
  // refused, not reported by diff as a difference (i = 255 came from 4 bytes overwritten in a file)
  const Problem p = trace_problem(t.header);
  const auto bad = [&](auto edit, const std::string& needle) {
    Trace c = record_trace(p, TraceLevel::block);
    edit(c);
    rejects(encode_trace(c, TraceFormat::binary), needle);
    rejects(encode_trace(c, TraceFormat::text), needle);
  };
  bad([&](Trace& c) { c.events[1].i = std::int32_t(p.tiling.t_r()); }, "i = " + std::to_string(p.tiling.t_r()));
  bad([&](Trace& c) { c.events[1].j = -2; }, "j = -2");
  bad([&](Trace& c) { c.events[1].op = Op::skip; c.events[1].bytes = 1ull << 40; }, "0 for a skip event");
}

TEST_CASE("bad headers: JSON, keys, types, config values, GPU facts") {
  const std::string txt = encode_trace(sample(), TraceFormat::text);
  const std::size_t h0 = txt.find("header ") + 7, h1 = txt.find('\n', h0);
  auto with_header = [&](const std::string& json) { return txt.substr(0, h0) + json + txt.substr(h1); };
  const std::string good = txt.substr(h0, h1 - h0);
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string j = good;
    const auto at = j.find(from);
    REQUIRE(at != std::string::npos);
    return with_header(j.replace(at, from.size(), to));
  };
  rejects(with_header("{not json"), "trace header JSON = not valid JSON: one JSON object");
  rejects(with_header("[1,2,3]"), "trace header JSON = an array of 3 values: a JSON object");
  rejects(edit(",\"source\":\"sim\"", ""), "trace header source = missing");
  rejects(edit("\"source\":\"sim\"", "\"source\":7"), "trace header source = 7: a string");
  rejects(edit("\"source\":\"sim\"", "\"source\":\"sim\",\"extra\":1"), "trace header keys = unknown key \"extra\"");
  rejects(with_header(std::string(200000, '[')), "trace header");
  rejects(edit("\"level\":\"warp\"", "\"level\":\"thread\""), "level");
  rejects(edit("\"source\":\"sim\"", "\"source\":\"sim\",\"extra\":1"), "unknown key");
  rejects(edit("\"warps\":2", "\"warps\":0"), "warps");
  rejects(edit("\"warps\":2", "\"warps\":\"2\""), "integer");
  rejects(edit("\"n_q\":9", "\"n_q\":-9"), "trace header config.n_q = -9");
  rejects(edit("\"n_q\":9", "\"n_q\":99999999999999999999"), "n_q");
  rejects(edit("\"n_q\":9", "\"nq\":-9"), "trace header config.nq = -9");  // format-1 name, named as written
  rejects(edit("\"d\":4", "\"d\":4.5"), "integer");
  rejects(edit("\"mask\":\"causal\"", "\"mask\":\"diagonal\""), "mask");
  rejects(edit("\"b_r\":4,", ""), "trace header config.b_r = missing");
  rejects(edit("\"t_r\":3", "\"t_r\":4"), "trace header config.t_r = 4");
  rejects(edit("\"source\":\"sim\"", "\"source\":\"gpu\""), "gpu");
  rejects(edit("\"q\":\"random\"", "\"q\":\"lots\""), "inputs.q");
  rejects(edit("\"sram_capacity_bytes\":232448", "\"sram_capacity_bytes\":64"), "SRAM");  // V2 holds Q_i, K_j, V_j: 96 bytes
  rejects(edit("\"seed\":0", "\"seed\":-1"), "seed");
}

TEST_CASE("bad text lines") {
  const std::string txt = encode_trace(sample(), TraceFormat::text);
  const std::size_t ev0 = txt.find("events\n") + 7, ev1 = txt.find('\n', ev0);
  auto with_line = [&](const std::string& line) { return txt.substr(0, ev0) + line + txt.substr(ev1); };
  rejects(with_line("0 0 0 load Q 0 -1 4 4 32 -1"), "eq");
  rejects(with_line("0 0 0 load Q 0 -1 4 4 32 -1 - extra"), "no more fields");
  rejects(with_line("0 0 0 fetch Q 0 -1 4 4 32 -1 -"), "op");
  rejects(with_line("0 0 0 load X 0 -1 4 4 32 -1 -"), "tensor");
  rejects(with_line("0 0  0 load Q 0 -1 4 4 32 -1 -"), "one space");
  rejects(with_line("0 0 0 load Q 0 -1 4 4 -32 -1 -"), "bytes");
  rejects(with_line("0 4294967296 0 load Q 0 -1 4 4 32 -1 -"), "block");
  rejects(with_line("0 0 0 load Q 0 -1 4 4 32 -40000 -"), "warp");
  rejects(with_line("65536 0 0 load Q 0 -1 4 4 32 -1 -"), "launch");
  rejects(with_line("-1 0 0 load Q 0 -1 4 4 32 -1 -"), "launch");
  rejects(with_line("0 0 load Q 0 -1 4 4 32 -1 -"), "trace text line 4 step = load");  // a version-1 line in a v2 file
  rejects(txt + "more\n", "after \"end\"");
  std::string m = txt;
  const std::size_t at = m.find("\nm ") + 3;
  m.replace(at, m.find(' ', at) - at, "1e999");
  rejects(m, "m");
}

TEST_CASE("deep nesting in a header is refused while it is parsed, naming where, never a crash (issue 9 item 1)") {
  // Before: 60,000 nested '[' (120 KB, under the 1 MiB cap) parsed, then the error message dumped
  // the whole document recursively and the stack overflowed (SIGSEGV).
  const Trace t = sample();
  const std::string good = test::header_text(t);
  const auto nested = [](std::size_t n, const std::string& inner) { return std::string(n, '[') + inner + std::string(n, ']'); };
  REQUIRE(kMaxTraceHeaderDepth == 8);
  for (TraceFormat f : {TraceFormat::text, TraceFormat::binary}) {
    CAPTURE(to_string(f));
    const std::string file = encode_trace(t, f);
    // the whole header: arrays at levels 1 ... 60,000; the ninth is refused, under the eighth's path
    rejects(test::with_header_json(file, nested(60000, "")), "trace header [][][][][][][][] = nested deeper than 8 levels");
    rejects(test::with_header_json(file, std::string(60000, '[')), "nested deeper than 8 levels");
    std::string objects;
    for (int k = 0; k < 30000; ++k) objects += "{\"a\":";
    rejects(test::with_header_json(file, objects), "trace header a.a.a.a.a.a.a.a = nested deeper than 8 levels");
    // inside config.n_q (a value at level 2): arrays at levels 3 ... 8 parse and the type is refused,
    // one more level is refused as too deep
    rejects(test::with_header_json(file, test::replaced(good, "\"n_q\":9", "\"n_q\":" + nested(6, "9"))),
            "trace header config.n_q = an array of 1 values: an integer");
    rejects(test::with_header_json(file, test::replaced(good, "\"n_q\":9", "\"n_q\":" + nested(7, "9"))),
            "trace header config.n_q[][][][][][] = nested deeper than 8 levels");
    rejects(test::with_header_json(file, test::replaced(good, "\"n_q\":9", "\"n_q\":" + nested(60000, "9"))),
            "trace header config.n_q[][][][][][] = nested deeper than 8 levels");
    rejects(test::with_header_json(file, test::replaced(good, "\"d\":4", "\"d\":{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{}}}}}}}")),
            "trace header config.d.a.b.c.d.e.f = nested deeper");
  }
}

TEST_CASE("error messages quote at most a short piece of a hostile header") {
  const Trace t = sample();
  const std::string good = test::header_text(t);
  const std::string file = encode_trace(t, TraceFormat::text);
  const std::string big(500000, 'x');
  for (const std::string& json :
       {test::replaced(good, "\"n_q\":9", "\"n_q\":\"" + big + "\""), test::replaced(good, "\"gpu\":\"h200\"", "\"gpu\":\"" + big + "\""),
        test::replaced(good, "\"source\":\"sim\"", "\"source\":\"sim\",\"" + big + "\":1"),
        test::replaced(good, "\"algo\":\"v2\"", "\"algo\":\"" + big + "\""),
        test::replaced(good, "\"n_q\":9", "\"n_q\":[" + std::string(200000, '1') + "]")}) {
    try {
      decode_trace(test::with_header_json(file, json));
      FAIL("accepted");
    } catch (const ConfigError& e) {
      INFO(std::string(e.what()).substr(0, 300));
      CHECK(std::string(e.what()).size() < 400);
    }
  }
}
