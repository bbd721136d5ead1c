// playback_panel.cpp — stepping through the schedule: step, play, pause, speed, scrub; the step's
// actions; SRAM occupancy against the capacity M; HBM bytes per tensor growing as bars.
#include <algorithm>
#include <cmath>
#include <string>

#include <imgui.h>

#include "flashlab/report/format.hpp"
#include "model/palette.hpp"
#include "panels/help.hpp"
#include "panels/panels.hpp"

namespace flashlab::viz {
namespace {

const char* level_name(Level l) {
  switch (l) {
    case Level::prologue: return "prologue";
    case Level::outer_begin: return "outer loop begin";
    case Level::inner: return "inner loop";
    case Level::outer_end: return "outer loop end";
  }
  return "?";
}

void step_text(const Track& track) {
  const StepView* s = track.last();
  if (!s) {
    ImGui::TextDisabled("before the first step");
    return;
  }
  std::string line = "thread block " + std::to_string(s->block) + ", step " + std::to_string(s->step) + ": " +
                     level_name(s->level);
  if (s->i >= 0 || s->j >= 0) line += ", (i, j) = (" + std::to_string(s->i) + ", " + std::to_string(s->j) + ")";
  if (s->level == Level::inner) line.append(", ").append(to_string(s->cls)).append(s->skip ? ", not visited (block skip)" : "");
  ImGui::TextWrapped("%s", line.c_str());
  std::string acts;
  for (const Action& a : s->actions) {
    if (!acts.empty()) acts += "; ";
    if (a.op == Op::compute) acts.append(to_string(a.eq));
    else acts.append(to_string(a.op)).append(" ").append(to_string(a.tensor));
  }
  if (!acts.empty()) ImGui::TextWrapped("actions: %s", acts.c_str());
}

void sram_bar(const Track& track) {
  const Resident r = track.executor().resident();
  const std::int64_t cap = track.executor().problem().sram_capacity;
  std::string on_chip;
  if (r.q_block >= 0) on_chip += "Q_" + std::to_string(r.q_block) + " ";
  if (r.kv_block >= 0) on_chip += "K_" + std::to_string(r.kv_block) + " V_" + std::to_string(r.kv_block) + " ";
  if (r.scores) on_chip += "S_" + std::to_string(r.q_block) + "," + std::to_string(r.kv_block) + " ";
  const std::string overlay = report::human_bytes(double(r.bytes)) + " of M = " + report::human_bytes(double(cap));
  ImGui::ProgressBar(cap > 0 ? float(double(r.bytes) / double(cap)) : 0.0f, {-1, 0}, overlay.c_str());
  item_help("SRAM occupancy after this step: the tiles resident on chip (Q_i, K_j, V_j and S_ij, all at e_in "
            "bytes) against the capacity M of one thread block.");
  ImGui::TextDisabled("on chip: %s", on_chip.empty() ? "nothing" : on_chip.c_str());
}

void hbm_bars(const Track& track, const Counters& totals, std::int64_t bh) {
  const Cost& now = track.executor().cost_one_head();
  std::uint64_t top = 1;
  for (int t = 0; t < kTensorCount; ++t)
    for (int d = 0; d < 2; ++d) top = std::max(top, totals.cost.hbm[std::size_t(t)][std::size_t(d)] / std::uint64_t(bh));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  constexpr float kLabel = 80, kFigures = 150;
  const float width = std::max(60.0f, ImGui::GetContentRegionAvail().x - kLabel - kFigures);
  const float h = ImGui::GetTextLineHeight();
  for (int t = 0; t < kTensorCount; ++t)
    for (int d = 0; d < 2; ++d) {
      const std::uint64_t end = totals.cost.hbm[std::size_t(t)][std::size_t(d)] / std::uint64_t(bh);
      if (end == 0) continue;
      const std::uint64_t so_far = now.hbm[std::size_t(t)][std::size_t(d)];
      ImGui::Text("%s %-5s", to_string(Tensor(t)).data(), d == 0 ? "read" : "write");
      ImGui::SameLine(kLabel);
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float full = width * float(double(end) / double(top)), part = width * float(double(so_far) / double(top));
      dl->AddRect(p, {p.x + full, p.y + h}, ImGui::GetColorU32(ImGuiCol_Border));
      dl->AddRectFilled(p, {p.x + part, p.y + h}, d == 0 ? palette::full : palette::partial);
      ImGui::Dummy({width, h});
      item_help("HBM bytes of this tensor so far (filled) against the whole run (outline), one (batch, head).");
      ImGui::SameLine();
      ImGui::TextUnformatted((report::human_bytes(double(so_far)) + " / " + report::human_bytes(double(end))).c_str());
    }
}

}  // namespace

void draw_transport(Playback& clock) {
  if (ImGui::Button("|<")) clock.seek(0);
  item_help("Back to the start of the schedule.");
  ImGui::SameLine();
  if (ImGui::Button("<")) clock.step(-1);
  item_help("One step back (the executor replays from the start up to the previous step).");
  ImGui::SameLine();
  if (ImGui::Button(clock.playing() ? "pause" : "play", {50, 0})) clock.playing() ? clock.pause() : clock.play();
  item_help("Play the schedule: each step is one load/compute/store group of the algorithm's loop nest.");
  ImGui::SameLine();
  if (ImGui::Button(">")) clock.step(1);
  item_help("One step forward.");
  ImGui::SameLine();
  if (ImGui::Button(">|")) clock.seek(clock.total());
  item_help("To the end of the schedule.");
  ImGui::SameLine();
  float speed = float(clock.speed);
  ImGui::SetNextItemWidth(150);
  if (ImGui::SliderFloat("steps/s", &speed, 1.0f, 1e6f, "%.0f", ImGuiSliderFlags_Logarithmic)) clock.speed = speed;
  item_help("Playback speed in steps per second.");
  std::uint64_t pos = clock.position();
  const std::uint64_t lo = 0, hi = clock.total();
  ImGui::SetNextItemWidth(-1);
  if (ImGui::SliderScalar("##scrub", ImGuiDataType_U64, &pos, &lo, &hi, "step %llu")) clock.seek(pos);
  item_help("Scrub to any step of the schedule; 0 is before the first step.");
}

void PlaybackPanel::sync(const Session& s) {
  if (generation_ == s.generation()) return;
  generation_ = s.generation();
  track_ = std::make_unique<Track>(s.problem(), s.analysis().totals().steps);
  clock.seek(0);
  clock.pause();
}

void PlaybackPanel::advance(double dt, std::uint64_t total) {
  clock.set_total(total);
  clock.advance(dt);
  track_->seek(clock.position());
}

void PlaybackPanel::draw(const Session& s) {
  draw_transport(clock);
  ImGui::Text("step %s of %s", report::group_digits(clock.position()).c_str(), report::group_digits(clock.total()).c_str());
  step_text(*track_);
  ImGui::Spacing();
  ImGui::TextUnformatted("SRAM");
  sram_bar(*track_);
  ImGui::Spacing();
  ImGui::TextUnformatted("HBM traffic so far, by tensor");
  hbm_bars(*track_, s.analysis().totals(), s.problem().bh());
  ImGui::Spacing();
  ImGui::Checkbox("numerics: m and l of the current Q block", &numerics);
  item_help("Runs the real numbers (seeded random Q, K, V at the dtype) and shows the running row max m and "
            "row sum l of the current Q block after each step (FA1 Alg. 1 line 11, FA2 Alg. 1 line 9).");
  if (numerics) draw_numerics(s);
}

}  // namespace flashlab::viz
