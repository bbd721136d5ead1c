// report.cpp — number formatting and the JSON form of a Problem and its Counters.
#include "report.hpp"

#include <array>

#include <fmt/format.h>

namespace flashlab::cli {

std::string group_digits(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return out;
}

std::string human_bytes(double bytes) {
  static constexpr std::array<const char*, 7> units{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t u = 0;
  while (bytes >= 1024 && u + 1 < units.size()) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.2f} {}", bytes, units[u]);
}

std::string human_count(double v) {
  static constexpr std::array<const char*, 7> units{"", "k", "M", "G", "T", "P", "E"};
  std::size_t u = 0;
  while (v >= 1000 && u + 1 < units.size()) {
    v /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string bytes_both(std::uint64_t bytes) {
  return bytes < 1024 ? fmt::format("{} B", bytes)
                      : fmt::format("{} B ({})", group_digits(bytes), human_bytes(double(bytes)));
}

std::string ratio(double a, double b) {
  if (b == 0) return "-";
  const double r = a / b;
  return r >= 100 ? fmt::format("{:.0f}x", r) : r >= 0.01 || r == 0 ? fmt::format("{:.2f}x", r) : fmt::format("{:.2g}x", r);
}

std::string shape_line(const Problem& p) {
  const Tiling& t = p.tiling;
  return fmt::format(
      "N_q = {}, N_k = {}, d = {}; B_r = {}, B_c = {} -> T_r = {}, T_c = {}; mask {}; {}; batch {}, heads {}; "
      "SRAM M = {} B; GPU {}",
      t.n_q, t.n_k, t.d, t.b_r, t.b_c, t.t_r(), t.t_c(), to_string(p.mask), to_string(p.dtype), p.batch,
      p.heads, group_digits(std::uint64_t(p.sram_capacity)), p.gpu.name);
}

std::string config_line(const Problem& p) {
  std::string line = fmt::format("{}: {}; block skip {}", to_string(p.algo), shape_line(p), p.block_skip ? "on" : "off");
  // a variant between V1 and V2 (docs/model.md "Variants"): the switches beyond block skip
  Switches same = p.switches();
  same.block_skip = preset_switches(p.algo).block_skip;
  if (p.algo != Algo::standard && !(same == preset_switches(p.algo)))
    line += fmt::format("; order {}, grid {}, rescale {}, split {}", to_string(p.order), to_string(p.grid),
                        to_string(p.rescale), to_string(p.split));
  return line;
}

nlohmann::json problem_json(const Problem& p) {
  const Tiling& t = p.tiling;
  nlohmann::json j = {
      {"algo", to_string(p.algo)},   {"n_q", t.n_q},
      {"n_k", t.n_k},                {"d", t.d},
      {"b_r", t.b_r},                {"b_c", t.b_c},
      {"t_r", t.t_r()},              {"t_c", t.t_c()},
      {"batch", p.batch},            {"heads", p.heads},
      {"dtype", to_string(p.dtype)}, {"e_in", p.e_in},
      {"mask", to_string(p.mask)},   {"block_skip", p.block_skip},
      {"scale", p.scale},            {"warps", p.warps},
      {"split", to_string(p.split)}, {"sram_capacity_bytes", p.sram_capacity},
      {"gpu", p.gpu.name},
  };
  if (p.algo != Algo::standard) {  // the switches of a tiled forward (standard attention walks no tiles)
    j["order"] = to_string(p.order);
    j["grid"] = to_string(p.grid);
    j["rescale"] = to_string(p.rescale);
    j["preset"] = p.is_preset();
  }
  return j;
}

namespace {

// One memory level: bytes per tensor by direction and their totals.
nlohmann::json level_json(const TensorBytes& b) {
  nlohmann::json read = nlohmann::json::object(), write = nlohmann::json::object();
  for (int t = 0; t < kTensorCount; ++t) {
    const std::string name(to_string(Tensor(t)));
    read[name] = b[t][int(Dir::read)];
    write[name] = b[t][int(Dir::write)];
  }
  const std::uint64_t r = total(b, Dir::read), w = total(b, Dir::write);
  return {{"read_bytes", read}, {"write_bytes", write}, {"total_read_bytes", r}, {"total_write_bytes", w},
          {"total_bytes", r + w}};
}

}  // namespace

nlohmann::json counters_json(const Counters& k, const Problem& p) {
  nlohmann::json ops = nlohmann::json::object();
  for (int o = 0; o < kOpKindCount; ++o) ops[std::string(to_string(OpKind(o)))] = k.cost.op(OpKind(o));
  nlohmann::json launches = nlohmann::json::array();
  for (const LaunchCounters& l : k.launches)
    launches.push_back({{"name", l.name},
                        {"grid", l.grid},
                        {"read_bytes", l.cost.read_bytes()},
                        {"write_bytes", l.cost.write_bytes()},
                        {"sram_peak_bytes", l.sram_peak_bytes},
                        {"blocks_per_sm", l.blocks_per_sm},
                        {"waves", l.waves}});
  nlohmann::json out = {
      {"hbm", level_json(k.cost.hbm)},
      {"tiles",
       {{"total", k.tiles.total},
        {"visited", k.tiles.visited},
        {"full", k.tiles.full},
        {"partial", k.tiles.partial},
        {"skipped", k.tiles.skipped}}},
      {"flops", {{"matmul", k.cost.flops}}},
      {"ops", ops},
      {"sram", {{"peak_bytes", k.sram_peak_bytes}, {"capacity_bytes", k.sram_capacity}}},
      {"grid",
       {{"blocks", k.grid_blocks}, {"blocks_per_sm", k.blocks_per_sm}, {"waves", k.waves}, {"sms", p.gpu.sms}}},
      {"launches", launches},
      {"steps", k.steps},
  };
  // The other memory levels by name (memory.hpp); the sector level only when it was counted.
  nlohmann::json memory = nlohmann::json::object();
  for (Memory m : {Memory::sector, Memory::sram, Memory::registers, Memory::l2, Memory::dram})
    if ((m != Memory::sector || k.sectors) && ((m != Memory::l2 && m != Memory::dram) || k.l2))
      memory[std::string(to_string(m))] = level_json(k.levels[int(m)]);
  out["memory"] = memory;
  return out;
}

}  // namespace flashlab::cli
