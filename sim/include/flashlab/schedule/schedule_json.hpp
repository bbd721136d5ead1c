// schedule_json.hpp — a schedule (schedule.hpp) as JSON, both ways: what the Python module hands a
// student to read and edit, and takes back to count, run and trace (docs/model.md "Schedules").
//
//   {"launches": [{"name": "v2_forward",
//                  "loops": [{"dim": "batch", "grid": true}, ..., {"dim": "kv_block", "grid": false,
//                             "order": "ascending"}],
//                  "prologue": [[ACTION, ...], ...],              (steps before the tile loops)
//                  "outer_begin": [ACTION, ...], "body": [ACTION, ...], "outer_end": [ACTION, ...],
//                  "placement": {"Q": "sram", "S": "registers", ...}}, ...]}
//   ACTION: {"op": "load" | "store" | "atomic", "tensor": "Q", "region": "q_block", "if_visited": false,
//            "requests": 2, "padded": true, "per_kv_head": true}
//                  ("requests" only when not 1, "padded" and "per_kv_head" only when true: Action)
//         | {"op": "compute", "eq": "scores", "if_visited": false}
// Names are the event record's (docs/events.md "Fields"): tensors Q K V O l m L S P dO dQ dK dV D
// dQacc dP dS Oacc Lacc; equations init_stats, scores, softmax_v2, ...; dims batch, head, q_block,
// kv_block, q_row, kv_split, dq_slice; regions whole, q_block, kv_block, q_block_splits; memories sram,
// registers; orders ascending, descending. "order", "if_visited", "requests", "padded" and
// "per_kv_head" may be left out (ascending, false, 1, false, false); every other key is required,
// and no other key is allowed.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// `s` in the form above (every key written).
nlohmann::json schedule_json(const Schedule& s);

/// The schedule `j` describes, checked by check_schedule. Throws ConfigError naming the place
/// (`where` + ".launches[1].body[2].tensor = \"X\": one of Q K V ...") for a missing or unknown key,
/// a value of the wrong type or an unknown name, and (field `where` + ".launches[k]") for a
/// schedule that cannot be walked (check_schedule's rule).
Schedule schedule_from_json(const nlohmann::json& j, const std::string& where = "schedule");

}  // namespace flashlab
