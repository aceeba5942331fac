#include "examples/common/png.h"

// The one translation unit that compiles stb_image_write's implementation.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

namespace ember::examples {

Image::Image(int w, int h, Rgb background) : width(w), height(h), pixels(static_cast<size_t>(w) * h * 3) {
  fill_rect(0, 0, w, h, background);
}

void Image::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= width || y >= height) return;
  uint8_t* p = &pixels[(static_cast<size_t>(y) * width + x) * 3];
  p[0] = c.r;
  p[1] = c.g;
  p[2] = c.b;
}

void Image::fill_rect(int x0, int y0, int w, int h, Rgb c) {
  for (int y = y0; y < y0 + h; ++y)
    for (int x = x0; x < x0 + w; ++x) set(x, y, c);
}

bool write_png(const std::string& path, const Image& image) {
  return stbi_write_png(path.c_str(), image.width, image.height, 3, image.pixels.data(), image.width * 3) != 0;
}

}  // namespace ember::examples
