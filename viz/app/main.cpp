// main.cpp — flashlab-viewer: GLFW + OpenGL 3 around the panels of viz/panels.
//
//   flashlab-viewer --model llama3-8b --seq 8192            interactive
//   flashlab-viewer --nq 131072 --nk 131072 --br 128 --bc 128 --mask causal --frames 300
//   xvfb-run -a -s "-screen 0 1280x720x24" flashlab-viewer --mask causal --screenshot map.png
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <nlohmann/json.hpp>

#include "flashlab/contract/error.hpp"
#include "flashlab/trace/output_file.hpp"
#include "gl_window.hpp"
#include "model/frame_stats.hpp"
#include "options.hpp"

using namespace flashlab;
using namespace flashlab::viz;

namespace {

void on_glfw_error(int code, const char* text) { std::fprintf(stderr, "flashlab-viewer: GLFW error %d: %s\n", code, text); }

// Where the map's grid lies on screen, so that a test can sample the pixels of known tiles.
// Written whole or not at all (output_file.hpp); returns "" or what went wrong.
std::string write_layout(const std::string& path, const Viewer& v, int width, int height) {
  const GridLayout& g = v.map.layout;
  const nlohmann::json j = {{"width", width},   {"height", height},  {"map_x0", g.min.x}, {"map_y0", g.min.y},
                            {"map_x1", g.max.x}, {"map_y1", g.max.y}, {"t_r", g.rows},     {"t_c", g.cols}};
  try {
    write_output_file(path, j.dump(2) + "\n");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Returns false when a trace file of the command line cannot be opened.
bool apply(const AppOptions& o, Viewer& v) {
  v.config.model = o.model;
  v.map.mode = o.map_mode;
  v.map.metric = o.metric;
  v.map.selected = o.select;
  v.sweep.axis = o.sweep_axis;
  v.playback.numerics = o.numerics;
  v.playback.clock.speed = o.speed;
  for (std::size_t k = 0; k < o.traces.size(); ++k)
    if (!v.traces.open(int(k), o.traces[k])) {
      std::fprintf(stderr, "flashlab-viewer: %s\n", v.traces.error[k].c_str());
      return false;
    }
  v.show(o.tab);
  v.seek(o.step);
  if (o.play) v.playback.clock.play();
  return true;
}

// Opens the window and its OpenGL 3.0 context, made current (no vsync for a batch run: frames are
// measured, not the monitor's refresh); prints why not and returns nullptr otherwise.
GLFWwindow* open_window(const AppOptions& opt, bool batch) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    std::fprintf(stderr,
                 "flashlab-viewer: no display: GLFW could not connect to a window system. Run it in a desktop "
                 "session, or headless under Xvfb:\n  xvfb-run -a -s \"-screen 0 1280x720x24\" flashlab-viewer ...\n");
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  GLFWwindow* window = glfwCreateWindow(opt.width, opt.height, "flashlab viewer", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "flashlab-viewer: could not open an OpenGL 3.0 window\n");
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(batch ? 0 : 1);  // measure frames, not the monitor's refresh
  return window;
}

// ImGui on the window: GLFW and OpenGL 3 back ends, dark style, no .ini file.
void start_imgui(GLFWwindow* window) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");
}

// The last frame's files, from the back buffer of w x h pixels: --screenshot and --layout. Returns
// the exit code: 1 when one could not be written.
int write_final_files(const AppOptions& opt, Viewer& viewer, int w, int h) {
  int code = 0;
  if (!opt.screenshot.empty()) {
    if (const std::string err = write_back_buffer(opt.screenshot, opt.screenshot_format, w, h); !err.empty()) {
      std::fprintf(stderr, "flashlab-viewer: %s\n", err.c_str());
      code = 1;
    } else {
      std::printf("wrote %s (%d x %d)\n", opt.screenshot.c_str(), w, h);
    }
  }
  if (!opt.layout.empty())
    if (const std::string err = write_layout(opt.layout, viewer, w, h); !err.empty()) {
      std::fprintf(stderr, "flashlab-viewer: %s\n", err.c_str());
      code = 1;
    }
  return code;
}

// Draws frames until the window closes or, for a batch run, the last frame (--frames N, or 3 for
// --screenshot); then prints --frames' timing report. Returns the exit code.
int run_frames(GLFWwindow* window, const AppOptions& opt, Viewer& viewer, bool batch) {
  const int frames = opt.frames > 0 ? opt.frames : !opt.screenshot.empty() ? 3 : 0;
  double first_ms = 0;           // frame 0 builds the textures: reported on its own
  std::vector<double> frame_ms;  // the frames after it
  int code = 0;
  auto last = std::chrono::steady_clock::now();
  for (int frame = 0; !glfwWindowShouldClose(window); ++frame) {
    glfwPollEvents();
    const bool final_frame = frames > 0 && frame == frames - 1;
    if (final_frame && !opt.screenshot.empty()) {  // pictures show finished background work
      viewer.sweep.wait();
      viewer.compare.wait();
      viewer.playback.wait_numerics();
      viewer.timeline.wait();
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (batch) {  // the mouse of a batch run is where --hover puts it, or nowhere
      const TileRef& h = opt.hover;
      const bool on_map = h.valid() && h.i < viewer.map.layout.rows && h.j < viewer.map.layout.cols;
      ImGui::GetIO().MousePos = on_map ? viewer.map.layout.cell_center(h.i, h.j) : ImVec2(-FLT_MAX, -FLT_MAX);
    }
    ImGui::NewFrame();
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(now - last).count();
    viewer.frame(ImGui::GetIO().DisplaySize, dt);
    ImGui::Render();
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    glViewport(0, 0, w, h);
    glClearColor(0.06f, 0.06f, 0.07f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (final_frame) code = write_final_files(opt, viewer, w, h);
    glfwSwapBuffers(window);
    const auto end = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(end - last).count();
    if (frame == 0) first_ms = ms;
    else frame_ms.push_back(ms);
    last = end;
    if (final_frame) break;
  }
  if (opt.frames > 0) std::printf("%s\n", frame_report(first_ms, frame_ms).c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  AppOptions opt;
  if (const ParseOutcome parsed = parse_options(argc, argv, opt); parsed.exit) {
    if (*parsed.exit == 0) std::fputs(parsed.message.c_str(), stdout);
    else std::fprintf(stderr, "flashlab-viewer: %s\n", parsed.message.c_str());
    return *parsed.exit;
  }
  auto textures = std::make_unique<GlTextures>();  // used only once a GL context exists
  std::unique_ptr<Viewer> viewer;
  try {
    viewer = std::make_unique<Viewer>(opt.config, *textures);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "flashlab-viewer: %s\n", e.what());
    return 2;
  }
  if (!apply(opt, *viewer)) return 2;

  const bool batch = opt.frames > 0 || !opt.screenshot.empty();
  GLFWwindow* window = open_window(opt, batch);
  if (!window) return 1;
  start_imgui(window);
  const int code = run_frames(window, opt, *viewer, batch);

  viewer.reset();
  textures.reset();  // glDeleteTextures while the context is current
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return code;
}
