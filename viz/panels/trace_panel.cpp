// trace_panel.cpp — trace files: open one (simulator or GPU) and play it step by step on the map of
// its config; open two and see where they diverge (diff.hpp); write a simulator trace of the
// current config to compare with a GPU run.
#include <algorithm>
#include <string>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "flashlab/contract/error.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "flashlab/report/format.hpp"
#include "model/palette.hpp"
#include "panels/help.hpp"
#include "panels/panels.hpp"

namespace flashlab::viz {
namespace {

void red_text(const std::string& s) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
  ImGui::TextWrapped("%s", s.c_str());
  ImGui::PopStyleColor();
}

// Writes a simulator trace of p to `path`, streaming events as the executor runs (trace_io.hpp).
std::string record(const Problem& p, const std::string& path, TraceLevel level, TraceFormat format) {
  try {
    TraceHeader h;
    h.source = TraceSource::sim;
    h.level = level;
    h.config = resolved_config(p);
    h.command = "flashlab-viewer (record)";
    TraceFileWriter w(path, p, h, format);
    Executor e(p);
    e.add_observer(&w);
    e.run();
    w.finish();
    return "wrote " + path + " (" + report::group_digits(w.events_written()) + " events)";
  } catch (const std::exception& e) {
    return std::string("not written: ") + e.what();
  }
}

void events_list(std::span<const Event> events) {
  ImGui::BeginChild("##events", {0, 110}, true);
  ImGui::TextDisabled("block step op tensor i j rows cols bytes warp eq");
  for (const Event& e : events) ImGui::TextUnformatted(event_line(e).c_str());
  ImGui::EndChild();
  item_help("The events of this (block, step): loads and stores with their HBM bytes, computes with their "
            "equation, skips, and at warp level each warp's compute, reduce and barrier events.");
}

}  // namespace

bool TracePanel::open(int which, const std::string& file) {
  path[which] = file;
  view[which].reset();
  error[which].clear();
  try {
    view[which] = std::make_unique<TraceView>(file);
  } catch (const std::exception& e) {  // ConfigError for a bad file; anything else is reported too
    error[which] = e.what();
    return false;
  }
  if (which == 0) {
    analysis = std::make_unique<TileAnalysis>(view[0]->problem());
    ++opened_;
    clock.set_total(view[0]->steps());
    clock.seek(0);
  }
  compare();
  return true;
}

void TracePanel::compare() {
  diff.reset();
  diff_error.clear();
  if (!view[0] || !view[1]) return;
  try {
    diff = diff_traces(view[0]->trace(), view[1]->trace());
  } catch (const ConfigError& e) {
    diff_error = e.what();
  }
}

bool TracePanel::go_to_divergence() {
  if (!diff || !diff->first) return false;
  const std::size_t k = view[0]->find_step(diff->first->launch, diff->first->block, diff->first->step);
  clock.set_total(view[0]->steps());
  clock.seek(k < view[0]->steps() ? k + 1 : view[0]->steps());  // that group is the last one played
  return true;
}

void TracePanel::draw_open() {
  for (int k = 0; k < 2; ++k) {
    ImGui::PushID(k);
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - 70);
    ImGui::InputTextWithHint("##path", k == 0 ? "trace A: path to a .trace file" : "trace B (to compare with A)", &path[k]);
    item_help("A trace file written by `flashlab trace`, by the instrumented CUDA kernels, or by the button "
              "below (text or binary form, docs/events.md).");
    ImGui::SameLine();
    if (ImGui::Button(k == 0 ? "open A" : "open B")) open(k, path[k]);
    item_help(k == 0 ? "Open trace A and play it." : "Open trace B and compare it with A, event by event.");
    if (!error[k].empty()) red_text(error[k]);
    else if (view[k]) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextDisabled("%s: %s events, %s steps", header_summary(view[k]->trace().header).c_str(),
                          report::group_digits(view[k]->trace().events.size()).c_str(), report::group_digits(view[k]->steps()).c_str());
      ImGui::PopTextWrapPos();
    }
    ImGui::PopID();
  }
}

void TracePanel::draw_play(TextureSink& sink) {
  TraceView& a = *view[0];
  clock.set_total(a.steps());
  draw_transport(clock);
  const std::size_t pos = std::size_t(clock.position());
  if (pos == 0) {
    ImGui::TextDisabled("before the first step of A");
  } else {
    const auto events = a.step_events(pos - 1);
    ImGui::Text("A: launch %u, block %u, step %u: %zu events", unsigned(events.front().launch), events.front().block,
                events.front().step, events.size());
    events_list(events);
  }
  const TensorBytes& bytes = a.bytes_before(pos);
  std::string moved;
  for (int t = 0; t < kTensorCount; ++t)
    for (int d = 0; d < 2; ++d)
      if (bytes[std::size_t(t)][std::size_t(d)] > 0)
        moved.append(moved.empty() ? "" : ", ").append(to_string(Tensor(t))).append(d == 0 ? " read " : " written ")
            .append(report::human_bytes(double(bytes[std::size_t(t)][std::size_t(d)])));
  ImGui::TextWrapped("HBM so far (from the trace's load and store events): %s", moved.empty() ? "none" : moved.c_str());

  const Tiling& t = analysis->tiling();
  const GridAxes ax{t.t_r(), t.t_c(), t.b_r, t.b_c, 0, 0, t.n_q, t.n_k};
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const GridLayout lay = grid_layout(ax, ImGui::GetCursorScreenPos(), {avail.x, std::min(avail.y, 260.0f)});
  const int w = lay.pixel_width(), h = lay.pixel_height();
  const ImTextureID tex = texture.get(sink, {std::int64_t(opened_), w, h}, [&] {
    return map_image(*analysis, MapMode::classes, Metric::hbm_bytes, w, h);
  });
  const GridHit hit = draw_grid("##trace-map", lay, ax, tex);
  if (pos > 0) {
    const Event& e = a.step_events(pos - 1).front();
    if (e.i >= 0 && e.j >= 0) outline_cells(lay, e.i, e.i, e.j, e.j, palette::resident, 3.0f);
    else if (e.i >= 0) outline_cells(lay, e.i, e.i, 0, t.t_c() - 1, palette::resident, 1.5f);
    else if (e.j >= 0) outline_cells(lay, 0, t.t_r() - 1, e.j, e.j, palette::resident, 1.5f);
  }
  if (hit.hovered) ImGui::SetTooltip("%s", tile_summary(*analysis, hit.hovered->first, hit.hovered->second).c_str());
  ImGui::SetCursorScreenPos({lay.min.x - kGridLeftMargin, lay.max.y + 6});
}

void TracePanel::draw_diff() {
  if (!diff_error.empty()) {
    red_text("A and B cannot be compared: " + diff_error);
    return;
  }
  if (!diff) return;
  const DiffResult& r = *diff;
  if (r.agree()) {
    ImGui::TextColored(ImVec4(0.4f, 0.9f, 0.5f, 1), "A and B agree: %s events and %s values of m and l compared",
                       report::group_digits(r.events_a).c_str(), report::group_digits(r.values_compared).c_str());
  } else if (r.first) {
    const EventDivergence& f = *r.first;
    std::string fields;
    for (const auto& s : f.fields) fields.append(fields.empty() ? "" : ", ").append(s);
    red_text("first divergence: launch " + std::to_string(f.launch) + ", block " + std::to_string(f.block) +
             ", step " + std::to_string(f.step) + ", event " + std::to_string(f.index) + " of the step" +
             (fields.empty() ? "" : " (" + fields + ")"));
    ImGui::TextWrapped("A: %s", f.a ? event_line(*f.a).c_str() : "(no event)");
    ImGui::TextWrapped("B: %s", f.b ? event_line(*f.b).c_str() : "(no event)");
    if (ImGui::Button("go to the divergence")) go_to_divergence();
    item_help("Play A up to the (launch, block, step) where the traces first differ.");
  }
  if (ImGui::CollapsingHeader("diff report")) {
    const std::string report = format_diff(r, view[0]->name(), view[1]->name());
    ImGui::TextUnformatted(report.c_str());
  }
}

void TracePanel::draw_record(const Session& s) {
  if (!ImGui::CollapsingHeader("write a simulator trace of the current config")) return;
  ImGui::SetNextItemWidth(-1);
  ImGui::InputText("##record-path", &record_path);
  item_help("Where to write the trace (through a temporary file renamed when complete).");
  ImGui::RadioButton("block level", &record_level, 0);
  item_help("The events the CUDA kernels record: loads, stores, computes, skips of the whole thread block.");
  ImGui::SameLine();
  ImGui::RadioButton("warp level", &record_level, 1);
  item_help("Also each warp's compute, reduce (split-K) and barrier events (warps.hpp).");
  ImGui::SameLine();
  ImGui::RadioButton("text", &record_format, 0);
  item_help("One line per event, for people and small runs.");
  ImGui::SameLine();
  ImGui::RadioButton("binary", &record_format, 1);
  item_help("40-byte records, for large runs.");
  record_job.poll();
  if (ImGui::Button("write") && !record_job.busy()) {
    const Problem p = s.problem();
    const std::string file = record_path;
    const auto level = TraceLevel(record_level);
    const auto format = TraceFormat(record_format);
    record_job.start([p, file, level, format] { return record(p, file, level, format); });
  }
  item_help("Record every event of the current config's schedule to the file.");
  ImGui::SameLine();
  if (record_job.busy()) ImGui::TextDisabled("writing...");
  else if (const std::string* m = record_job.result()) ImGui::TextWrapped("%s", m->c_str());
}

void TracePanel::draw(const Session& s, TextureSink& sink) {
  draw_open();
  if (view[0]) {
    ImGui::Separator();
    draw_play(sink);
  }
  if (view[1]) {
    ImGui::Separator();
    draw_diff();
  }
  ImGui::Separator();
  draw_record(s);
}

}  // namespace flashlab::viz
