// format.hpp — how every program prints a number: the `flashlab` command, the viewer and
// flashlab-gpu all call these, so a figure reads the same wherever it is shown.
//
// One unit system: bytes in binary units (KiB = 1024 B, MiB, GiB, ...), counts (FLOPs,
// operations) in decimal units (k = 1000, M, G, ...), exact integers with digit groups. Decimal
// bytes (MB = 10^6 B) appear only where the tool quotes another tool that prints them (ncu).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace flashlab::report {

/// 2162688 -> "2,162,688".
std::string group_digits(std::uint64_t v);
/// Bytes in binary units with `decimals` digits after the point: 8650752 -> "8.25 MiB",
/// 83968 -> "82.00 KiB"; below 1 KiB the integer: 512 -> "512 B". decimals = 0 for axis ticks at
/// powers of two: 1048576 -> "1 MiB".
std::string human_bytes(double bytes, int decimals = 2);
/// Counts in decimal units, one decimal: 268435456 -> "268.4 M"; below 1000 the integer: "999".
/// With a unit, the prefix joins it and the integer stands apart: (268435456, "FLOP") ->
/// "268.4 MFLOP", (16, "FLOP") -> "16 FLOP".
std::string human_count(double v, std::string_view unit = {});
/// The exact bytes and the human form: "8,650,752 B (8.25 MiB)"; below 1 KiB only "512 B".
std::string bytes_both(std::uint64_t bytes);
/// a / b as "3.97x": two decimals from 0.01x to 100x, none from 100x, two significant digits
/// below 0.01x; "-" when b is 0.
std::string ratio(double a, double b);
/// Seconds with a unit: 1.5 -> "1.500 s", 0.0021 -> "2.100 ms", 3.2e-6 -> "3.2 us".
std::string seconds(double s);

}  // namespace flashlab::report
