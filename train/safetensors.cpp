#include "train/safetensors.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/io.h"
#include "tensor/kernels.h"

namespace ember::train {

// ordered_json keeps the header's keys in the order they were written or
// read, so a file lists its tensors in the caller's order and a read returns
// them in the file's order (nlohmann::json would sort them by name).
using json = nlohmann::ordered_json;

namespace {

// ---- dtype names of the format ----
const char* st_dtype(DType d) {
  switch (d) {
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
    case DType::Int64: return "I64";
    case DType::Bool: return "BOOL";
    case DType::BFloat16: return "BF16";
    case DType::Int8: return "I8";
  }
  return "?";
}
bool parse_st_dtype(const std::string& s, DType& out) {
  if (s == "F32") out = kFloat32;
  else if (s == "F64") out = kFloat64;
  else if (s == "I64") out = kInt64;
  else if (s == "BOOL") out = kBool;
  else if (s == "BF16") out = kBFloat16;
  else if (s == "I8") out = kInt8;
  else return false;
  return true;
}

// A JSON value for an error message. Arrays and objects are described, not
// dumped: dump() recurses, and a hostile header can nest a million levels.
std::string describe(const json& j) {
  bool flat = j.is_primitive() || (j.is_array() && j.size() <= 8);
  if (j.is_array())
    for (const json& x : j) flat = flat && x.is_primitive();
  if (!flat) return j.is_array() ? "an array of " + std::to_string(j.size()) + " values" : std::string("an object");
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 64 ? s.substr(0, 64) + "..." : s;
}

uint32_t crc32_of(const char* data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large sections in pieces.
  while (n > 0) {
    uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), chunk);
    data += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

// ---- writing ----
void write_safetensors(const std::string& path, const NamedTensors& tensors, const Metadata& metadata) {
  // 1. The data section and the header, in memory.
  std::vector<Tensor> contiguous;
  std::set<std::string> names;
  uint64_t offset = 0;
  json header = json::object();
  for (const auto& [name, t] : tensors) {
    EMBER_CHECK(!name.empty() && name != "__metadata__", "save", path << ": invalid tensor name \"" << name << "\"");
    EMBER_CHECK(names.insert(name).second, "save", path << ": tensor \"" << name << "\" appears twice");
    Tensor c = kernel::contiguous(t);
    uint64_t nbytes = static_cast<uint64_t>(c.numel()) * dtype_size(c.dtype());
    header[name] = {{"dtype", st_dtype(c.dtype())}, {"shape", c.shape()}, {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
    contiguous.push_back(c);
  }
  std::string data(offset, '\0');
  size_t at = 0;
  for (const Tensor& c : contiguous) {
    size_t nbytes = static_cast<size_t>(c.numel()) * dtype_size(c.dtype());
    if (nbytes) std::memcpy(data.data() + at, c.raw_data(), nbytes);
    at += nbytes;
  }
  json meta = json::object();
  for (const auto& [k, v] : metadata) meta[k] = v;
  std::ostringstream crc;
  crc << std::hex << crc32_of(data.data(), data.size());
  meta["ember.crc32"] = crc.str();
  header["__metadata__"] = meta;
  std::string h;
  try {
    h = header.dump();
  } catch (const json::exception&) {  // a name or a metadata string that is not valid UTF-8
    EMBER_FAIL("save", path << ": tensor names and metadata must be valid UTF-8");
  }
  h.append((8 - h.size() % 8) % 8, ' ');  // pad so the data section is 8-byte aligned
  char len[8];
  uint64_t hl = h.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((hl >> (8 * i)) & 0xFF);

  // 2. [8-byte length][header][data], written atomically.
  write_file_atomically(path, {std::string_view(len, 8), h, data}, "save");
}

// ---- reading and validating, in steps: split, parse the JSON, check each
// entry, check the layout of the data section, verify the checksum, copy ----
namespace {

// One tensor's entry in the header, checked against the data section's size.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;  // byte offsets into the data section
};

// 1. [8-byte length][header][data]: the length is checked before anything is read past it.
void split_file(const std::string& bytes, const std::string& file, std::string& header_text, uint64_t& data_at) {
  EMBER_CHECK(bytes.size() >= 8, "load", file << ": file is " << bytes.size() << " bytes, shorter than the 8-byte header length");
  uint64_t hl = 0;
  for (int i = 0; i < 8; ++i) hl |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  EMBER_CHECK(hl <= kMaxHeaderBytes, "load", file << ": header length " << hl << " exceeds the limit of " << kMaxHeaderBytes << " bytes");
  EMBER_CHECK(hl <= bytes.size() - 8, "load", file << ": header length " << hl << " is larger than the rest of the file ("
                                                   << bytes.size() - 8 << " bytes)");
  header_text = bytes.substr(8, hl);
  data_at = 8 + hl;
}

// 2. The header as JSON, rejecting duplicate top-level names (JSON parsers
// keep the last one silently).
json parse_header(const std::string& header_text, const std::string& file) {
  json header;
  std::set<std::string> seen;
  std::string duplicate;
  try {
    header = json::parse(header_text, [&](int depth, json::parse_event_t ev, json& j) {
      if (depth == 1 && ev == json::parse_event_t::key && !seen.insert(j.get<std::string>()).second)
        duplicate = j.get<std::string>();
      return true;
    });
  } catch (const json::exception& e) {
    EMBER_FAIL("load", file << ": header is not valid UTF-8 JSON: " << e.what());
  }
  EMBER_CHECK(duplicate.empty(), "load", file << ": tensor \"" << duplicate << "\" appears twice in the header");
  EMBER_CHECK(header.is_object(), "load", file << ": header must be a JSON object");
  return header;
}

Metadata parse_metadata(const json& v, const std::string& file) {
  EMBER_CHECK(v.is_object(), "load", file << ": __metadata__ must be an object of strings");
  Metadata out;
  for (auto m = v.begin(); m != v.end(); ++m) {
    EMBER_CHECK(m.value().is_string(), "load", file << ": __metadata__ entry \"" << m.key() << "\" is not a string");
    out[m.key()] = m.value().get<std::string>();
  }
  return out;
}

// 3. One tensor entry: a known dtype, a shape whose element count and
// strides fit int64, offsets inside the data section that hold exactly
// numel * itemsize bytes.
Entry parse_entry(const std::string& name, const json& v, uint64_t data_size, const std::string& file) {
  const char* op = "load";
  EMBER_CHECK(v.is_object() && v.contains("dtype") && v.contains("shape") && v.contains("data_offsets"), op,
              file << ": tensor \"" << name << "\" needs dtype, shape and data_offsets");
  Entry e{name, kFloat32, {}, 0, 0};
  EMBER_CHECK(v["dtype"].is_string() && parse_st_dtype(v["dtype"].get<std::string>(), e.dtype), op,
              file << ": tensor \"" << name << "\" has unknown dtype " << describe(v["dtype"]));
  EMBER_CHECK(v["shape"].is_array(), op,
              file << ": tensor \"" << name << "\" shape must be an array, got " << describe(v["shape"]));
  for (const json& d : v["shape"]) {
    EMBER_CHECK(d.is_number_integer() && d.get<int64_t>() >= 0 && !(d.is_number_unsigned() && d.get<uint64_t>() > INT64_MAX),
                op, file << ": tensor \"" << name << "\" has an invalid dim " << describe(d) << " at index " << e.shape.size()
                         << " of its shape");
    e.shape.push_back(d.get<int64_t>());
  }
  int64_t numel = 0;
  try {
    numel = checked_numel(e.shape, "load");
  } catch (const Error&) {
    EMBER_FAIL(op, file << ": tensor \"" << name << "\" shape " << shape_str(e.shape) << " has more elements than int64 can count");
  }
  // empty() computes contiguous strides, products of the dims with zeros
  // counted as 1: they must fit in int64 too, or a zero-size shape such as
  // (0, 2^62, 2^62) would overflow them.
  int64_t span = 1;
  for (int64_t d : e.shape)
    EMBER_CHECK(!__builtin_mul_overflow(span, std::max<int64_t>(d, 1), &span), op,
                file << ": tensor \"" << name << "\" shape " << shape_str(e.shape) << " is too large (its strides overflow int64)");
  const json& off = v["data_offsets"];
  EMBER_CHECK(off.is_array() && off.size() == 2 && off[0].is_number_unsigned() && off[1].is_number_unsigned(), op,
              file << ": tensor \"" << name << "\" data_offsets must be two non-negative integers, got " << describe(off));
  e.begin = off[0].get<uint64_t>();
  e.end = off[1].get<uint64_t>();
  EMBER_CHECK(e.begin <= e.end && e.end <= data_size, op,
              file << ": tensor \"" << name << "\" data_offsets [" << e.begin << ", " << e.end
                   << "] are out of range for a data section of " << data_size << " bytes");
  uint64_t expect = 0;
  EMBER_CHECK(!__builtin_mul_overflow(static_cast<uint64_t>(numel), dtype_size(e.dtype), &expect) && e.end - e.begin == expect,
              op, file << ": tensor \"" << name << "\" has " << e.end - e.begin << " bytes but shape " << shape_str(e.shape)
                       << " of " << st_dtype(e.dtype) << " needs " << numel << " x " << dtype_size(e.dtype));
  return e;
}

// 4. The data section holds exactly the tensors, back to back, in any order.
void check_layout(const std::vector<Entry>& entries, uint64_t data_size, const std::string& file) {
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t pos = 0;
  for (const Entry* e : by_offset) {
    EMBER_CHECK(e->begin == pos, "load",
                file << ": tensor \"" << e->name << "\" starts at byte " << e->begin << " of the data section, expected " << pos
                     << (e->begin < pos ? " (it overlaps the previous tensor)" : " (there is a gap before it)"));
    pos = e->end;
  }
  EMBER_CHECK(pos == data_size, "load", file << ": the data section has " << data_size - pos << " trailing bytes after the last tensor");
}

// 5. The CRC-32 that ember wrote, if any, matches the data.
void verify_crc(const Metadata& metadata, const char* data, uint64_t data_size, const std::string& file) {
  auto crc = metadata.find("ember.crc32");
  if (crc == metadata.end()) return;
  std::ostringstream actual;
  actual << std::hex << crc32_of(data, data_size);
  EMBER_CHECK(actual.str() == crc->second, "load",
              file << ": data checksum mismatch (crc32 " << actual.str() << ", header says " << crc->second
                   << "): the file is corrupted");
}

// 6. Copy one entry's bytes into a new tensor (BOOL bytes must be 0 or 1).
Tensor materialize(const Entry& e, const char* data, const std::string& file) {
  Tensor t = empty(e.shape, e.dtype);
  if (e.end > e.begin) std::memcpy(t.raw_data(), data + e.begin, e.end - e.begin);
  if (e.dtype == kBool) {
    const uint8_t* b = reinterpret_cast<const uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i)
      EMBER_CHECK(b[i] <= 1, "load", file << ": tensor \"" << e.name << "\" has a BOOL byte " << int(b[i]) << " at element " << i);
  }
  return t;
}

}  // namespace

SafetensorsContents parse_safetensors(const std::string& bytes, const std::string& file) {
  std::string header_text;
  uint64_t data_at = 0;
  split_file(bytes, file, header_text, data_at);
  const char* data = bytes.data() + data_at;
  const uint64_t data_size = bytes.size() - data_at;
  const json header = parse_header(header_text, file);

  SafetensorsContents out;
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") out.metadata = parse_metadata(it.value(), file);
    else entries.push_back(parse_entry(it.key(), it.value(), data_size, file));
  }
  check_layout(entries, data_size, file);
  verify_crc(out.metadata, data, data_size, file);
  for (const Entry& e : entries) out.tensors.emplace_back(e.name, materialize(e, data, file));
  return out;
}

SafetensorsContents read_safetensors(const std::string& path) {
  // A regular file only (not a directory, FIFO or /dev/zero), and no more
  // than it holds: the 8-byte header length first, checked against the
  // file's size, then the rest.
  RegularFile f;
  open_regular_file(path, "load", INT64_MAX, f);
  std::string bytes;
  const int64_t head = std::min<int64_t>(8, f.size);
  read_exactly(f, head, bytes, path, "load");
  if (head == 8) {
    uint64_t hl = 0;
    for (int i = 0; i < 8; ++i) hl |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    EMBER_CHECK(hl <= kMaxHeaderBytes, "load",
                path << ": header length " << hl << " exceeds the limit of " << kMaxHeaderBytes << " bytes");
    EMBER_CHECK(hl <= static_cast<uint64_t>(f.size - 8), "load",
                path << ": header length " << hl << " is larger than the rest of the file (" << f.size - 8 << " bytes)");
    read_exactly(f, f.size - 8, bytes, path, "load");
  }
  return parse_safetensors(bytes, path);
}

Metadata read_safetensors_metadata(const std::string& path) {
  RegularFile f;
  open_regular_file(path, "load", INT64_MAX, f);
  std::string bytes;
  read_exactly(f, std::min<int64_t>(8, f.size), bytes, path, "load");
  EMBER_CHECK(bytes.size() == 8, "load", path << ": " << bytes.size() << " bytes, too short for a safetensors header");
  uint64_t hl = 0;
  for (int i = 0; i < 8; ++i) hl |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  EMBER_CHECK(hl <= kMaxHeaderBytes && hl <= static_cast<uint64_t>(f.size - 8), "load",
              path << ": header length " << hl << " does not fit the file (" << f.size - 8 << " bytes after it)");
  read_exactly(f, static_cast<int64_t>(hl), bytes, path, "load");
  const json header = parse_header(bytes.substr(8), path);
  auto it = header.find("__metadata__");
  return it == header.end() ? Metadata{} : parse_metadata(*it, path);
}

}  // namespace ember::train
