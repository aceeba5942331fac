/// @file
/// The safetensors file format: named tensors and string metadata in one
/// file, written atomically, read with every check done before a tensor is
/// returned. It knows nothing of modules (train/checkpoint.h builds model
/// checkpoints on it); any safetensors reader can open ember's files.
///
/// File layout (all little-endian):
///   [8 bytes: N = header length] [N bytes: JSON header] [data section]
/// The header maps each tensor name to {"dtype": "F32"|"F64"|"I64"|"BOOL"|"BF16"|"I8",
/// "shape": [...], "data_offsets": [begin, end]} (offsets into the data
/// section), plus an optional "__metadata__" map of strings. ember adds
/// "ember.crc32" (a CRC-32 of the data section) to catch flipped bytes.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace ember::train {

using Metadata = std::map<std::string, std::string>;
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// The largest header ember accepts (a defence against hostile files).
inline constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

/// Writes tensors (contiguous copies are made as needed) and metadata to path
/// atomically (base/io.h): on any failure the previous file at path is
/// untouched and no temporary is left behind.
void write_safetensors(const std::string& path, const NamedTensors& tensors, const Metadata& metadata = {});

struct SafetensorsContents {
  NamedTensors tensors;  // in the order of the header (write_safetensors keeps the caller's order)
  Metadata metadata;
};
/// Reads and validates a whole file; throws ember::Error naming the file, the
/// tensor and the problem. Verifies ember.crc32 when present.
SafetensorsContents read_safetensors(const std::string& path);
/// Only the metadata, read from the header (the tensors are neither read nor
/// checked): what a run directory needs to tell which run and step a file
/// belongs to without reading its data. Errors as read_safetensors.
Metadata read_safetensors_metadata(const std::string& path);
/// Parses an in-memory file image (what the fuzzer drives); `name` is used in errors.
SafetensorsContents parse_safetensors(const std::string& bytes, const std::string& name);

}  // namespace ember::train
