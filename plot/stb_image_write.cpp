// The one translation unit that compiles stb_image_write's implementation
// (Debian libstb-dev, header-only).
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
