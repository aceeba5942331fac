// png_check FILE [WIDTH HEIGHT]: exits 0 if FILE decodes as a PNG (of that
// size, when given). The examples' pictures are checked with it by CTest.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "png_decode.h"

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
  std::printf("png_check: %s is a %d x %d PNG\n", argv[1], png.width, png.height);
  return 0;
}
