// plot/png.cpp: pixels to a PNG file. Every picture ember writes is the same
// kind of PNG: 8-bit RGB, composited over white (no transparency), written
// atomically. Canvas::write ends here, and so does flatten_png, which turns a
// PNG that another program drew (Graphviz's RGBA, for autograd_basics) into
// that kind.
#include "plot/png.h"

#include <stb_image_write.h>

// stb_image (Debian libstb-dev) decodes the other program's PNG. Its
// functions are made static to this file, so that a program that compiles
// stb_image itself (the tests do) links without a clash; the ones not used
// here would each warn.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#include <stb_image.h>
#pragma GCC diagnostic pop

#include "base/error.h"
#include "base/io.h"
#include "plot/plot.h"

namespace ember::plot {

namespace detail {

void write_rgb_png(const std::string& path, const uint8_t* rgba, int width, int height, const char* op) {
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (size_t i = 0, n = static_cast<size_t>(width) * height; i < n; ++i) {
    const uint8_t* p = &rgba[i * 4];  // over white: c * alpha + 255 * (1 - alpha)
    for (int k = 0; k < 3; ++k) rgb[i * 3 + k] = static_cast<uint8_t>((p[k] * p[3] + 255 * (255 - p[3])) / 255);
  }
  std::string png;
  auto append = [](void* ctx, void* data, int size) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<size_t>(size));
  };
  EMBER_CHECK(stbi_write_png_to_func(append, &png, width, height, 3, rgb.data(), width * 3) != 0, op,
              path << ": PNG encoding failed");
  write_file_atomically(path, {png}, op);
}

}  // namespace detail

void flatten_png(const std::string& path) {
  int width = 0, height = 0, channels = 0;
  uint8_t* rgba = stbi_load(path.c_str(), &width, &height, &channels, 4);
  EMBER_CHECK(rgba != nullptr, "flatten_png", path << " does not decode as a PNG: " << stbi_failure_reason());
  try {
    detail::write_rgb_png(path, rgba, width, height, "flatten_png");
  } catch (...) {
    stbi_image_free(rgba);
    throw;
  }
  stbi_image_free(rgba);
}

}  // namespace ember::plot
