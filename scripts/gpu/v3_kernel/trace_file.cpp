// trace_file.cpp — trace_file.hpp: the V3 kernel's events written through the simulator's trace
// writer, with the config the simulator resolves for the kernel's variant.
#include "trace_file.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace.hpp"
#include "flashlab/trace/trace_io.hpp"

namespace v3trace {

namespace {

flashlab::Problem problem_of(const Spec& s) {
  try {
    return flashlab::resolve(config_of(s));
  } catch (const flashlab::ConfigError& e) {
    throw std::runtime_error(std::string("the simulator refuses the variant's config: ") + e.what());
  }
}

// The producer role of V3's block-level stream: the loads and the barriers around them.
bool producer_role(const flashlab::Event& e) {
  using flashlab::Eq, flashlab::Op;
  return e.agent <= flashlab::kAgentProducer || e.op == Op::load ||
         (e.op == Op::arrive && e.eq == Eq::stage_full) || (e.op == Op::wait && e.eq == Eq::stage_empty);
}

}  // namespace

flashlab::Config config_of(const Spec& s) {
  flashlab::Config c;
  c.algo = flashlab::Algo::v3;
  c.n_q = c.n_k = s.n;
  c.d = s.d;
  c.b_r = s.br;
  c.b_c = s.bc;
  c.batch = s.batch;
  c.heads = s.heads;
  c.dtype = s.bf16 ? flashlab::Dtype::bf16 : flashlab::Dtype::fp16;
  c.mask = flashlab::parse_mask(s.causal ? "causal" : "none");
  c.warp_specialize = s.warp_spec;
  c.stages = s.stages;
  c.pingpong = s.pingpong;
  c.intra_overlap = s.intra_overlap;
  c.scheduler = s.persistent ? flashlab::TileScheduler::persistent : flashlab::TileScheduler::grid;
  return c;
}

std::string sim_flags(const Spec& s) {
  return "--algo v3 --seq " + std::to_string(s.n) + " --d " + std::to_string(s.d) + " --br " + std::to_string(s.br) +
         " --bc " + std::to_string(s.bc) + " --batch " + std::to_string(s.batch) + " --heads " +
         std::to_string(s.heads) + " --dtype " + (s.bf16 ? "bf16" : "fp16") + " --mask " +
         (s.causal ? "causal" : "none") + " --stages " + std::to_string(s.stages) + " --warp-specialize " +
         (s.warp_spec ? "on" : "off") + " --pingpong " + (s.pingpong ? "on" : "off") + " --intra-overlap " +
         (s.intra_overlap ? "on" : "off") + " --scheduler " + (s.persistent ? "persistent" : "grid");
}

void tile_counts(const Spec& s, int& t_r, int& t_c) {
  const flashlab::Problem p = problem_of(s);
  t_r = int(p.tiling.t_r());
  t_c = int(p.tiling.t_c());
}

void merge_stream_order(std::vector<flashlab::Event>& events) {
  // rank within a (launch, block, step): producer role first in the order given (each agent's
  // buffer is in program order), then the consumers' events, position p of every warpgroup in turn
  std::map<std::tuple<int, std::uint32_t, std::uint32_t, int>, int> next_pos;
  std::vector<std::tuple<int, std::uint32_t, std::uint32_t, int, int, int, std::size_t>> key(events.size());
  for (std::size_t k = 0; k < events.size(); ++k) {
    const flashlab::Event& e = events[k];
    const bool prod = producer_role(e);
    const int pos = prod ? 0 : next_pos[{e.launch, e.block, e.step, e.agent}]++;
    key[k] = {e.launch, e.block, e.step, prod ? 0 : 1, pos, prod ? 0 : e.agent, k};
  }
  std::vector<std::size_t> order(events.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
  std::vector<flashlab::Event> out;
  out.reserve(events.size());
  for (std::size_t k : order) out.push_back(events[k]);
  events.swap(out);
}

void write(const std::string& path, const Spec& s, std::vector<flashlab::Event> events, bool text) {
  const flashlab::Problem p = problem_of(s);
  merge_stream_order(events);
  flashlab::Trace t;
  t.header.source = flashlab::TraceSource::gpu;
  t.header.level = flashlab::TraceLevel::block;
  t.header.config = flashlab::resolved_config(p);
  t.header.gpu = flashlab::GpuRunInfo{s.device.empty() ? "unknown" : s.device, s.driver.empty() ? "unknown" : s.driver,
                                      s.commit.empty() ? "unknown" : s.commit};
  t.header.command = s.command;
  t.events = std::move(events);
  try {
    flashlab::write_trace(path, t, text ? flashlab::TraceFormat::text : flashlab::TraceFormat::binary);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("writing the trace: ") + e.what());
  }
}

}  // namespace v3trace
