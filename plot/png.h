// plot/png.h (inside plot/, not part of its API): pixels to an RGB PNG file.
#pragma once

#include <cstdint>
#include <string>

namespace ember::plot::detail {

/// Composites width x height RGBA pixels over white and writes them to path
/// as an 8-bit RGB PNG, atomically; errors name `op` and the path.
void write_rgb_png(const std::string& path, const uint8_t* rgba, int width, int height, const char* op);

}  // namespace ember::plot::detail
