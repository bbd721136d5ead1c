// body.cpp — the part of a trace file after its header, as both forms lay it out: the events,
// then the statistics by Q block and snapshot, then the end (forms.hpp decode_body).
#include <string>

#include "forms.hpp"

namespace flashlab::trace_form {

Trace decode_body(const FileStart& start, BodySource& src) {
  Trace t;
  t.header = start.header;
  const Problem p = trace_problem(t.header);
  const std::int64_t t_r = p.tiling.t_r();
  for (Event e; src.next_event(e);) {
    check_event(e, t.events.size(), start.version);
    t.events.push_back(e);
  }
  if (start.version == 1) launches_from_v1(t);

  const std::uint64_t blocks = src.stats_count();
  if (blocks > std::uint64_t(t_r))
    src.fail(BodySource::Field::stats_count, std::to_string(blocks),
             "at most T_r = " + std::to_string(t_r) + " blocks");
  for (std::uint64_t b = 0; b < blocks; ++b) {
    BlockStats bs;
    std::uint64_t snapshots = 0;
    bs.i = src.stats_block(snapshots);
    if (bs.i < 0 || bs.i >= t_r)
      src.fail(BodySource::Field::stats_block, std::to_string(bs.i), "a Q block from 0 to T_r - 1");
    const auto rows = std::uint64_t(p.tiling.rows(bs.i));
    for (std::uint64_t k = 0; k < snapshots; ++k) {
      StatSnapshot s;
      const std::uint64_t n = src.snapshot(s);
      if (n != rows) src.fail(BodySource::Field::snapshot_rows, std::to_string(n), "rows(i) = " + std::to_string(rows));
      src.values(s, rows);
      bs.snapshots.push_back(std::move(s));
    }
    t.stats.push_back(std::move(bs));
  }
  src.end();
  check_trace(t);
  return t;
}

}  // namespace flashlab::trace_form
