// pictures_missing.cpp — built in place of the picture sources whose library CMake did not find
// (apps/flashlab/CMakeLists.txt): `count --map` and `sweep --plot` then fail with the package to install,
// before any work is done.
#include <stdexcept>
#include <string>

#include "map_picture.hpp"
#include "plot_image.hpp"
#include "png_output.hpp"

namespace flashlab::cli {

#if !FLASHLAB_HAVE_STB
namespace {
[[noreturn]] void no_stb(const std::string& option) {
  throw std::runtime_error("--" + option + " needs stb (stb_image_write.h, stb_easy_font.h), which this build of "
                           "flashlab did not find; on Debian: apt-get install libstb-dev, then configure again");
}
}  // namespace

PngOutput::PngOutput(std::string option, const std::string&) : option_(std::move(option)), file_("-") {
  no_stb(option_);
}
void PngOutput::write(const viz::Image&) const { no_stb(option_); }
int map_cell_px(std::int64_t, std::int64_t) { no_stb("map"); }
std::string map_scale(std::int64_t, std::int64_t) { no_stb("map"); }
viz::Image map_picture(const Problem&) { no_stb("map"); }
#endif

#if !FLASHLAB_HAVE_PLPLOT
viz::Image plot_image(const Plot&, int, int) {
  throw std::runtime_error("--plot needs PLplot, which this build of flashlab did not find; on Debian: apt-get "
                           "install libplplot-dev plplot-driver-cairo, then configure again");
}
#endif

}  // namespace flashlab::cli
