// The one number format of the CLI, the viewer and flashlab-gpu (flashlab/report/format.hpp):
// bytes in binary units, counts in decimal units, exact integers with digit groups.
#include <doctest/doctest.h>

#include "flashlab/report/format.hpp"

using namespace flashlab::report;

TEST_CASE("exact integers: digit groups of three") {
  CHECK(group_digits(0) == "0");
  CHECK(group_digits(999) == "999");
  CHECK(group_digits(1000) == "1,000");
  CHECK(group_digits(2'162'688) == "2,162,688");
  CHECK(group_digits(18'446'744'073'709'551'615ull) == "18,446,744,073,709,551,615");
}

TEST_CASE("bytes: binary units everywhere (1 KiB = 1024 B)") {
  CHECK(human_bytes(0) == "0 B");
  CHECK(human_bytes(1023) == "1023 B");
  CHECK(human_bytes(1024) == "1.00 KiB");
  // 80 x 1024 bytes: the SRAM figure the CLI printed as 80.00 KiB and the viewer as 81.92 kB
  CHECK(human_bytes(81'920) == "80.00 KiB");
  CHECK(human_bytes(8'650'752) == "8.25 MiB");      // 8,650,752 / 2^20 = 8.25
  CHECK(human_bytes(4'460'544) == "4.25 MiB");      // 4,460,544 / 2^20 = 4.2539...
  CHECK(human_bytes(545'259'520) == "520.00 MiB");  // 520 x 2^20
  CHECK(human_bytes(3.0 * (1ull << 30)) == "3.00 GiB");
  CHECK(human_bytes(1 << 20, 0) == "1 MiB");  // axis ticks at powers of two
  CHECK(human_bytes(512 * 1024, 0) == "512 KiB");
}

TEST_CASE("counts: decimal units with one decimal") {
  CHECK(human_count(999) == "999");
  CHECK(human_count(1000) == "1.0 k");
  CHECK(human_count(268'435'456) == "268.4 M");
  CHECK(human_count(1.5e12) == "1.5 T");
  CHECK(human_count(268'435'456, "FLOP") == "268.4 MFLOP");  // the prefix joins the unit
  CHECK(human_count(16, "FLOP") == "16 FLOP");               // the integer stands apart from it
  CHECK(human_count(999, "FLOP") == "999 FLOP");
}

TEST_CASE("exact and human bytes together, ratios, seconds") {
  CHECK(bytes_both(512) == "512 B");
  CHECK(bytes_both(266'240) == "266,240 B (260.00 KiB)");  // 260 x 1024
  CHECK(ratio(3, 2) == "1.50x");
  CHECK(ratio(1000, 3) == "333x");
  CHECK(ratio(1, 1000) == "0.001x");  // two significant digits below 0.01x
  CHECK(ratio(0, 5) == "0.00x");
  CHECK(ratio(5, 0) == "-");
  CHECK(seconds(1.5) == "1.500 s");
  CHECK(seconds(0.0021) == "2.100 ms");
  CHECK(seconds(3.2e-6) == "3.2 us");
}
