// time_data.cpp — reading, walking and scoring the time model's data set (time_data.hpp).
#include "time_data.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/executor/l2_model.hpp"
#include "flashlab/executor/sector_counter.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/schedule/resolve.hpp"

namespace flashlab::timefit {
namespace {

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

std::string value_of(const std::vector<std::string>& w, const std::string& flag, const std::string& fallback = "") {
  const auto it = std::find(w.begin(), w.end(), flag);
  return it != w.end() && it + 1 != w.end() ? *(it + 1) : fallback;
}

std::string family_of(const std::string& key) {
  const std::vector<std::string> w = words(key);
  if (w[0] == "torch") return "torch " + value_of(w, "--pass");
  std::string f = value_of(w, "--pass") == "backward" ? "backward " : "";
  if (value_of(w, "--backward-form") == "deterministic") f += "deterministic ";
  if (value_of(w, "--kernel") == "fa2") return f + "fa2 (this project's kernel)";
  if (value_of(w, "--splits", "1") != "1") f += "split-KV ";
  if (!value_of(w, "--order").empty()) return f + "variant";
  f += value_of(w, "--algo");
  if (!value_of(w, "--warps").empty())
    f += " " + value_of(w, "--br") + "x" + value_of(w, "--bc") + "x" + value_of(w, "--warps");
  return f;
}

}  // namespace

Problem problem_of(const std::vector<std::string>& w) {
  std::vector<cli::FlagText> given;
  for (std::size_t k = 0; k + 1 < w.size(); k += 2) given.push_back({w[k].substr(2), w[k + 1]});
  return resolve(cli::build_config(given, ""));
}

Problem problem_of(const std::string& flags) { return problem_of(words(flags)); }

double Row::measured() const { return std::accumulate(measured_s.begin(), measured_s.end(), 0.0); }

TimePrediction Row::predict(const TimeParams& params) const {
  return predict_time(problem, *schedule, *timer, *counters, params);
}

std::vector<std::string> simulator_flags(const std::string& key) {
  std::vector<std::string> w = words(key);
  if (w.empty() || w[0] != "torch") return w;
  std::vector<std::string> out{"--kernel", "fa2", "--algo", "v2"};
  out.insert(out.end(), w.begin() + 1, w.end());
  return out;
}

std::vector<Row> load_rows(const std::string& path) {
  const std::string allowed = "a time data set as scripts/gpu/time_dataset_merge.py writes it "
                              "(tests/data/gpu_time/h200.json)";
  if (std::filesystem::is_directory(path)) throw ConfigError("time data set", path, allowed + ", not a folder");
  std::ifstream in(path);
  if (!in) throw ConfigError("time data set", path, "a readable file: " + allowed);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
    if (!doc.is_object() || !doc.contains("ours") || !doc.contains("torch"))
      throw ConfigError("time data set", path, allowed + ": an object with \"ours\" and \"torch\" rows");
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError("time data set", path, allowed + " (" + e.what() + ")");
  }
  std::vector<Row> rows;
  for (const char* part : {"ours", "torch"})
    for (const nlohmann::json& r : doc.at(part)) try {
      Row row;
      row.flags = r.at("flags").get<std::string>();
      row.split = r.at("split").get<std::string>();
      if (row.split != "train" && row.split != "test")
        throw ConfigError("split", row.split, "train or test (row " + row.flags + ")");
      row.family = family_of(row.flags);
      for (const nlohmann::json& l : r.at("launches")) {
        // PyTorch's backward call runs its forward first (O and L): as for this project's kernels
        // (time_dataset.py group_ours, "forward_first"), that launch is not part of the backward's time
        if (row.family == "torch backward" && l.at("name").get<std::string>().find("flash_fwd") != std::string::npos)
          continue;
        const std::vector<double> t = l.at("time_ns").get<std::vector<double>>();
        if (t.empty()) throw ConfigError("time_ns", "[]", "at least one sample (row " + row.flags + ")");
        row.measured_s.push_back(std::accumulate(t.begin(), t.end(), 0.0) / double(t.size()) * 1e-9);
        const std::vector<double> rd = l.at("dram_rd").get<std::vector<double>>();
        row.measured_dram_read.push_back(rd.empty() ? 0.0 : std::accumulate(rd.begin(), rd.end(), 0.0) / double(rd.size()));
      }
      row.problem = problem_of(simulator_flags(row.flags));
      Executor e(row.problem, make_schedule(row.problem));
      SectorCounter sectors(row.problem, e.schedule());  // the levels the time model reads, as model() attaches them
      L2Model l2(row.problem, e.schedule());
      e.add_level(&sectors);
      e.add_level(&l2);
      auto timer = std::make_shared<BlockTimer>(row.problem, e.schedule());
      e.add_observer(timer.get());
      e.run();
      row.counters = std::make_shared<Counters>(e.counters());
      row.schedule = std::make_shared<Schedule>(e.schedule());  // predict_time reads the launches' names
      row.timer = timer;
      if (e.schedule().launches.size() != row.measured_s.size())
        row.skipped = "the simulator's launches (" + std::to_string(e.schedule().launches.size()) +
                      ") are not the measured ones (" + std::to_string(row.measured_s.size()) + ")";
      rows.push_back(std::move(row));
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError("time data set", path, allowed + ": a row of \"" + part + "\" is malformed (" + e.what() + ")");
    }
  return rows;
}

double measured_dram_read(const Row& r) {
  return std::accumulate(r.measured_dram_read.begin(), r.measured_dram_read.end(), 0.0);
}

double predicted_dram_read(const Row& r) { return double(total(r.counters->levels[int(Memory::dram)], Dir::read)); }

std::vector<double> dram_errors(const std::vector<Row>& rows, const std::string& split) {
  std::vector<double> out;
  for (const Row& r : rows)
    if (r.skipped.empty() && (split.empty() || r.split == split) && measured_dram_read(r) >= double(1 << 20))
      out.push_back(std::abs(predicted_dram_read(r) / measured_dram_read(r) - 1));
  return out;
}

std::vector<double> errors(const std::vector<Row>& rows, const std::string& split, const TimeParams& params) {
  std::vector<double> out;
  for (const Row& r : rows)
    if (r.skipped.empty() && (split.empty() || r.split == split))
      out.push_back(std::abs(r.predict(params).time_s / r.measured() - 1));
  return out;
}

namespace {

// The mean |ln(predicted / measured)| over the training rows. The rows are predicted on the machine's
// cores (each prediction reads only its row), their terms summed in row order: the same loss on any
// machine.
double loss(const std::vector<Row>& rows, const TimeParams& p) {
  std::vector<const Row*> train;
  for (const Row& r : rows)
    if (r.skipped.empty() && r.split == "train") train.push_back(&r);
  std::vector<double> terms(train.size());
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (std::size_t x = w; x < train.size(); x += workers)
        terms[x] = std::abs(std::log(train[x]->predict(p).time_s / train[x]->measured()));
    });
  for (std::thread& t : pool) t.join();
  const double sum = std::accumulate(terms.begin(), terms.end(), 0.0);
  return train.empty() ? 0 : sum / double(train.size());
}

}  // namespace

SearchRound search_round(const std::vector<Row>& rows, const TimeParams& start) {
  if (std::none_of(rows.begin(), rows.end(), [](const Row& r) { return r.skipped.empty() && r.split == "train"; }))
    throw ConfigError("time data set", "no training rows", "at least one predicted row whose split is train");
  // grids: c 0.20..2.00 by 0.02, beta 0..1.5 by 0.02, lambda 0..2.00 us by 0.02 us (an extra beside the
  // measured L2 and DRAM latencies), iota 0..12 cycles by 0.1, phi 0..1 by 0.02
  // each grid value is n / per_unit, the double nearest it, as the decimal time_model.cpp writes it
  // (0.96, not 0.2 + 38 x 0.02: the model's deal has thresholds that a last bit can cross)
  auto grid = [](int lo, int hi, double per_unit) {
    std::vector<double> v;
    for (int n = lo; n <= hi; ++n) v.push_back(double(n) / per_unit);
    return v;
  };
  const std::vector<double> cs = grid(10, 100, 50), betas = grid(0, 75, 50), lambdas = grid(0, 100, 50e6);
  const std::vector<double> iotas = grid(0, 120, 10), floors = grid(0, 50, 50);
  struct Axis {
    double TimeParams::*field;
    const std::vector<double>& grid;
  };
  const Axis axes[] = {{&TimeParams::overlap, cs},
                       {&TimeParams::warp_stream, betas},
                       {&TimeParams::latency_s, lambdas},
                       {&TimeParams::issue_interval, iotas},
                       {&TimeParams::phase_floor, floors}};
  const double at_start = loss(rows, start);
  SearchRound r{.best = start, .start_loss = at_start, .best_loss = at_start,
                .lowest_tried_loss = std::numeric_limits<double>::infinity()};
  for (const Axis& a : axes)
    for (double v : a.grid) {
      TimeParams t = r.best;
      t.*a.field = v;
      const double l = loss(rows, t);
      ++r.tried;
      r.lowest_tried_loss = std::min(r.lowest_tried_loss, l);
      if (l < r.best_loss) r.best_loss = l, r.best = t;
    }
  return r;
}

TimeParams fit(const std::vector<Row>& rows) {
  // Coordinate search from a fixed start, at most eight rounds; it stops at a round that moves nothing.
  TimeParams best{.overlap = 1.0, .warp_stream = 0.5, .latency_s = 0.5e-6, .phase_floor = 0, .issue_interval = 0};
  for (int round = 0; round < 8; ++round) {
    const SearchRound r = search_round(rows, best);
    if (r.best_loss == r.start_loss) break;  // only a strictly lower loss moves a constant
    best = r.best;
  }
  return best;
}

}  // namespace flashlab::timefit
