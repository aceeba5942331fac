// A tiny RGB image and a PNG writer for the examples' pictures.
//
// Pixels are 8-bit RGB, row-major, (0, 0) at the top left. The encoding is
// stb_image_write's (Debian libstb-dev), compiled into examples/common/png.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember::examples {

struct Rgb {
  uint8_t r, g, b;
};

struct Image {
  int width, height;
  std::vector<uint8_t> pixels;  // width * height * 3 bytes

  Image(int w, int h, Rgb background = {255, 255, 255});
  // Out-of-bounds writes are ignored, so drawing code need not clip.
  void set(int x, int y, Rgb c);
  void fill_rect(int x0, int y0, int w, int h, Rgb c);
};

// Writes `image` to `path`; returns false (and the caller reports it) on failure.
bool write_png(const std::string& path, const Image& image);

}  // namespace ember::examples
