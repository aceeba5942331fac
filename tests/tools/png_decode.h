// Decodes a PNG file for the tests that check ember's pictures (stb_image,
// Debian libstb-dev; compiled once, in png_decode.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember::test {

struct Png {
  bool ok = false;
  std::string error;
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3
};
Png decode_png(const std::string& path);

}  // namespace ember::test
