// merge_check.cpp — checks trace_file.hpp's merge_stream_order, the rule by which `v3 trace` puts its
// agents' buffers into the simulator's stream order, against the simulator itself, with no GPU:
// for V3 configs covering each switch (stages 1-3, ping-pong, intra-warpgroup overlap, warp
// specialization, scheduler, causal / none, 2 and 3 consumer warpgroups, ragged N, N = 1), the
// simulator's block-level trace (record_trace) is split into the buffers the kernel writes — one per
// (block, recording thread), each in stream order: the producer's (agent 1, and the thread block's
// skip events, which the producer records), or with warp specialization off consumer warpgroup 0's
// (its own events, the loads and the skips), and one per other consumer warpgroup — concatenated
// buffer by buffer as `v3 trace` downloads them, merged, and compared with the simulator's stream
// record by record. The concatenation itself must differ from the stream in every config with two
// or more agents (else the check could not fail).
//   flashlab_v3_merge_check     exit 0 when every config merges back exactly, 1 otherwise (a line each)
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace.hpp"
#include "trace_file.hpp"

namespace {

struct Case {
  const char* name;
  int n, d, br, bc, stages;
  bool causal, ws, pingpong, overlap, persistent;
  int batch, heads;
};

bool same(const std::vector<flashlab::Event>& a, const std::vector<flashlab::Event>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::memcmp(&a[k], &b[k], sizeof(flashlab::Event)) != 0) return false;
  return true;
}

}  // namespace

int main() {
  const Case cases[] = {
      {"fa3 d128 none N1000", 1000, 128, 128, 176, 2, false, true, true, true, true, 1, 2},
      {"fa3 d128 causal N3000", 3000, 128, 128, 128, 2, true, true, true, true, true, 1, 1},
      {"fa3 d64 none N1000 (3 warpgroups)", 1000, 64, 192, 128, 2, false, true, true, true, true, 1, 2},
      {"fa3 d64 causal N3000 (3 warpgroups)", 3000, 64, 192, 128, 2, true, true, true, true, true, 1, 1},
      {"fa3 d64 none N1", 1, 64, 192, 128, 2, false, true, true, true, true, 3, 2},
      {"stages1", 1000, 128, 128, 176, 1, false, true, true, true, true, 1, 2},
      {"stages3 causal", 1000, 128, 128, 128, 3, true, true, true, true, true, 1, 2},
      {"no_pingpong", 1000, 128, 128, 176, 2, false, true, false, true, true, 1, 2},
      {"no_overlap causal", 1000, 128, 128, 128, 2, true, true, true, false, true, 1, 2},
      {"grid causal", 1000, 128, 128, 128, 2, true, true, true, true, false, 1, 2},
      {"no_ws none", 1000, 128, 128, 176, 2, false, false, false, true, false, 1, 2},
      {"no_ws causal no_overlap", 1000, 128, 128, 128, 2, true, false, false, false, false, 1, 2},
      {"br128 d64 causal", 1000, 64, 128, 128, 2, true, true, true, true, true, 1, 2},
  };
  int bad = 0;
  for (const Case& c : cases) {
    v3trace::Spec spec;
    spec.causal = c.causal;
    spec.d = c.d, spec.batch = c.batch, spec.n = c.n, spec.heads = c.heads;
    spec.br = c.br, spec.bc = c.bc, spec.stages = c.stages;
    spec.warp_spec = c.ws, spec.pingpong = c.pingpong, spec.intra_overlap = c.overlap, spec.persistent = c.persistent;
    const flashlab::Trace t =
        flashlab::record_trace(flashlab::resolve(v3trace::config_of(spec)), flashlab::TraceLevel::block);
    // the kernel's buffers: (block, recording agent); the skips go with the producer role's thread
    std::map<std::pair<std::uint32_t, int>, std::vector<flashlab::Event>> buf;
    for (const flashlab::Event& e : t.events) {
      const int who = e.agent != flashlab::kAgentBlock ? e.agent : c.ws ? flashlab::kAgentProducer : flashlab::kAgentConsumer;
      buf[{e.block, who}].push_back(e);
    }
    std::vector<flashlab::Event> got;
    for (const auto& [key, v] : buf) got.insert(got.end(), v.begin(), v.end());
    const bool concat_differs = !same(got, t.events);
    v3trace::merge_stream_order(got);
    const bool ok = same(got, t.events) && concat_differs;
    std::printf("%s: %zu events, %zu buffers, concatenation %s, merged %s\n", c.name, t.events.size(), buf.size(),
                concat_differs ? "differs" : "SAME (the check could not fail)",
                same(got, t.events) ? "identical" : "DIFFERS");
    bad += !ok;
  }
  std::printf("%s: %d of %zu configs failed\n", bad ? "FAIL" : "ok", bad, sizeof cases / sizeof cases[0]);
  return bad ? 1 : 0;
}
