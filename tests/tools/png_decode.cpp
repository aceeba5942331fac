#include "png_decode.h"

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb_image.h>

namespace ember::test {

Png decode_png(const std::string& path) {
  Png png;
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &png.width, &png.height, &channels, 3);
  if (!data) {
    png.error = stbi_failure_reason();
    return png;
  }
  png.rgb.assign(data, data + static_cast<size_t>(png.width) * png.height * 3);
  stbi_image_free(data);
  png.ok = true;
  return png;
}

}  // namespace ember::test
