// libFuzzer target: train::parse_safetensors on arbitrary bytes.
//
// A hostile file may only ever produce an ember::Error. Any other exception,
// a crash, or a sanitizer report (AddressSanitizer, UndefinedBehaviorSanitizer)
// is a finding. Built and run by fuzz/run.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "train/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ember::train::SafetensorsContents c =
        ember::train::parse_safetensors(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    // Read every byte of every tensor: AddressSanitizer reports a tensor
    // whose buffer is smaller than its shape x dtype says.
    unsigned sum = 0;
    for (const auto& [name, t] : c.tensors) {
      const unsigned char* p = static_cast<const unsigned char*>(t.raw_data());
      for (int64_t i = 0; i < t.numel() * static_cast<int64_t>(ember::dtype_size(t.dtype())); ++i) sum += p[i];
    }
    volatile unsigned sink = sum;
    (void)sink;
  } catch (const ember::Error&) {
    // the expected outcome for a malformed file
  }
  return 0;
}
