// png_check FILE [WIDTH HEIGHT]: exits 0 if FILE decodes as a PNG (of that
// size, when given) of the kind every picture ember writes: 8-bit RGB (PNG
// colour type 2: no alpha channel, no palette). The examples' pictures are
// checked with it by CTest.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "png_decode.h"

namespace {

// The bit depth and colour type in the PNG's header (IHDR, the first chunk:
// bytes 24 and 25 of the file), or -1 when the file is shorter.
std::pair<int, int> depth_and_colour_type(const char* path) {
  std::ifstream f(path, std::ios::binary);
  char head[26];
  if (!f.read(head, sizeof head)) return {-1, -1};
  return {static_cast<unsigned char>(head[24]), static_cast<unsigned char>(head[25])};
}

const char* colour_type_name(int t) {
  switch (t) {
    case 0: return "greyscale";
    case 2: return "RGB";
    case 3: return "palette";
    case 4: return "greyscale with alpha";
    case 6: return "RGBA";
  }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    std::fprintf(stderr, "usage: png_check FILE [WIDTH HEIGHT]\n");
    return 2;
  }
  ember::test::Png png = ember::test::decode_png(argv[1]);
  if (!png.ok) {
    std::fprintf(stderr, "png_check: %s does not decode: %s\n", argv[1], png.error.c_str());
    return 1;
  }
  if (argc == 4 && (png.width != std::atoi(argv[2]) || png.height != std::atoi(argv[3]))) {
    std::fprintf(stderr, "png_check: %s is %d x %d, expected %s x %s\n", argv[1], png.width, png.height, argv[2], argv[3]);
    return 1;
  }
  const auto [depth, type] = depth_and_colour_type(argv[1]);
  if (depth != 8 || type != 2) {
    std::fprintf(stderr, "png_check: %s is %d-bit %s, expected 8-bit RGB (as every picture ember writes)\n", argv[1],
                 depth, colour_type_name(type));
    return 1;
  }
  std::printf("png_check: %s is a %d x %d 8-bit RGB PNG\n", argv[1], png.width, png.height);
  return 0;
}
