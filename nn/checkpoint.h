// Checkpoints in the safetensors format, written atomically, read with every
// check done before any byte reaches a model.
//
// File layout (all little-endian):
//   [8 bytes: N = header length] [N bytes: JSON header] [data section]
// The header maps each tensor name to {"dtype": "F32"|"F64"|"I64"|"BOOL",
// "shape": [...], "data_offsets": [begin, end]} (offsets into the data
// section), plus an optional "__metadata__" map of strings. ember adds
// "ember.crc32" (a CRC-32 of the data section) to catch flipped bytes, and
// "ember.tied" to record tied parameters.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"

namespace ember::nn {

using Metadata = std::map<std::string, std::string>;
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// The largest header ember accepts (a defence against hostile files).
inline constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

// Writes tensors (contiguous copies are made as needed) and metadata to path
// atomically: a temporary file in the same directory is written, flushed,
// fsync'ed and renamed over path, then the directory is fsync'ed. On any
// failure the previous file at path is untouched and the temporary removed.
void write_safetensors(const std::string& path, const NamedTensors& tensors, const Metadata& metadata = {});

struct SafetensorsContents {
  NamedTensors tensors;  // in the order of the header (write_safetensors keeps the caller's order)
  Metadata metadata;
};
// Reads and validates a whole file; throws ember::Error naming the file, the
// tensor and the problem. Verifies ember.crc32 when present.
SafetensorsContents read_safetensors(const std::string& path);
// Parses an in-memory file image (what the fuzzer drives); `name` is used in errors.
SafetensorsContents parse_safetensors(const std::string& bytes, const std::string& name);

// save: every parameter and buffer by dotted name (a tied tensor once, the tie
// in metadata "ember.tied" as "alias=name;..."), plus the caller's metadata.
void save(const Module& module, const std::string& path, const Metadata& metadata = {});
// load: reads and validates the file, checks names (strict: no missing and no
// unexpected tensors), shapes and dtypes against the module, checks that the
// module's ties match the file's, and only then copies the values in. On any
// error the module is exactly as it was. Returns the file's metadata.
Metadata load(Module& module, const std::string& path, bool strict = true);

namespace testing {
// Makes the next checkpoint write fail after `bytes` bytes (-1: never), to
// test that a failed save leaves the previous file intact.
void fail_next_write_after(int64_t bytes);
}  // namespace testing

}  // namespace ember::nn
