// Checkpoints (train/safetensors.h, train/checkpoint.h, train/trainer.h): the safetensors round trip of
// every dtype and shape, module save/load (strict, ties, mismatches), every
// kind of damaged file, atomic saves, and exact resumption of training.
//
// Every damaged file is made here from a valid one, and every failed load is
// checked twice: the ember::Error names the file (and the tensor and the
// problem), and the module it was loaded into is bit for bit as it was.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/faults.h"
#include "base/io.h"
#include "nn/gpt.h"
#include "tensor/kernels.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/data.h"
#include "train/resume.h"
#include "train/trainer.h"

namespace {

using namespace ember;
using ember::test::expect_error;
using ember::test::TempDir;
using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

// ---- helpers ----


std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

// Same dtype, shape and bytes (so NaNs and -0.0 compare exactly).
::testing::AssertionResult bit_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return ::testing::AssertionFailure() << shape_str(a.shape()) << " " << dtype_name(a.dtype()) << " vs "
                                         << shape_str(b.shape()) << " " << dtype_name(b.dtype());
  Tensor ca = kernel::contiguous(a), cb = kernel::contiguous(b);
  size_t n = static_cast<size_t>(ca.numel()) * dtype_size(ca.dtype());
  if (n && std::memcmp(ca.raw_data(), cb.raw_data(), n) != 0) return ::testing::AssertionFailure() << "bytes differ";
  return ::testing::AssertionSuccess();
}

// An independent copy of every parameter and buffer of a module.
using Snapshot = std::vector<std::pair<std::string, Tensor>>;
Snapshot snapshot(const nn::Module& m) {
  Snapshot s;
  for (const auto& [name, t] : m.named_parameters(/*dedup=*/false)) s.emplace_back(name, kernel::to(t, t.dtype()));
  for (const auto& [name, t] : m.named_buffers()) s.emplace_back(name, kernel::to(t, t.dtype()));
  return s;
}
void expect_unchanged(const nn::Module& m, const Snapshot& before, const std::string& what) {
  Snapshot now = snapshot(m);
  ASSERT_EQ(now.size(), before.size()) << what;
  for (size_t i = 0; i < now.size(); ++i) {
    EXPECT_EQ(now[i].first, before[i].first) << what;
    EXPECT_TRUE(bit_equal(now[i].second, before[i].second)) << what << ": " << now[i].first << " changed";
  }
}
bool modules_bit_equal(const nn::Module& a, const nn::Module& b) {
  Snapshot sa = snapshot(a), sb = snapshot(b);
  if (sa.size() != sb.size()) return false;
  for (size_t i = 0; i < sa.size(); ++i)
    if (sa[i].first != sb[i].first || !bit_equal(sa[i].second, sb[i].second)) return false;
  return true;
}

// Loads `path` into `m`, which must fail with an ember::Error containing every
// part, and leave every parameter and buffer of m bit-identical.
void expect_load_fails_unchanged(nn::Module& m, const std::string& path, std::initializer_list<std::string> parts,
                                 const std::string& what, bool strict = true) {
  SCOPED_TRACE(what);
  Snapshot before = snapshot(m);
  expect_error([&] { train::load(m, path, strict); }, parts);
  expect_unchanged(m, before, what);
}

// A file split into its parts, to damage one and put it back together.
struct FileParts {
  std::string header;  // the JSON text (with its padding)
  std::string data;
};
FileParts split(const std::string& bytes) {
  uint64_t hl = 0;
  for (int i = 0; i < 8; ++i) hl |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return {bytes.substr(8, hl), bytes.substr(8 + hl)};
}
std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}
std::string join(const std::string& header, const std::string& data) { return le64(header.size()) + header + data; }
std::string join(const json& header, const std::string& data) { return join(header.dump(), data); }

// ---- small modules built for these tests ----

// Nested: Net -> enc (Encoder) -> inner (Inner); every dtype, a scalar and an
// empty tensor among the parameters and buffers.
class Inner : public nn::Module {
 public:
  Inner(int64_t in, int64_t out, Generator& g) {
    weight = register_parameter("weight", randn({in, out}, g));
    bias = register_parameter("bias", randn({out}, g));
  }
  std::string type_name() const override { return "Inner"; }
  Tensor weight, bias;
};
class Encoder : public nn::Module {
 public:
  Encoder(int64_t in, int64_t out, Generator& g) {
    inner = register_module("inner", std::make_shared<Inner>(in, out, g));
    scale = register_parameter("scale", randn({}, g, kFloat64));  // shape (): a scalar
    empty_rows = register_parameter("empty_rows", zeros({0, out}));
  }
  std::string type_name() const override { return "Encoder"; }
  std::shared_ptr<Inner> inner;
  Tensor scale, empty_rows;
};
class Net : public nn::Module {
 public:
  explicit Net(uint64_t seed, int64_t in = 2, int64_t out = 3, DType head_dtype = kFloat32) {
    Generator g(seed);
    enc = register_module("enc", std::make_shared<Encoder>(in, out, g));
    head = register_parameter("head", randn({out, 2}, g, head_dtype));
    counts = register_buffer("counts", randint(-1000, 1000, {4}, g));
    Tensor m = empty({5}, kBool);
    for (int i = 0; i < 5; ++i) m.data_ptr<bool>()[i] = (seed + i) % 2 == 0;
    mask = register_buffer("mask", m);
  }
  std::string type_name() const override { return "Net"; }
  std::shared_ptr<Encoder> enc;
  Tensor head, counts, mask;
};

nn::GPTConfig tiny_gpt_config(bool tie, uint64_t seed) {
  nn::GPTConfig c;
  c.vocab_size = 11;
  c.context_length = 8;
  c.dim = 8;
  c.heads = 2;
  c.layers = 1;
  c.tie_weights = tie;
  c.seed = seed;
  return c;
}

// ---- round trips ----

TEST(TrainCheckpointRoundTrip, EveryDtypeScalarEmptyAndNonContiguous) {
  TempDir dir;
  Generator g(7);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor f32 = tensor({1.5f, -0.0f, inf, -inf, nan, 3.25e-38f}, {2, 3});
  Tensor f64 = randn({3, 2, 2}, g, kFloat64);
  Tensor i64 = tensor(std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -1, 0, 1, std::numeric_limits<int64_t>::max()});
  Tensor b = tensor(std::vector<bool>{true, false, false, true, true, false}, {3, 2});
  Tensor base = randn({4, 5}, g);
  train::NamedTensors in = {
      {"f32", f32},
      {"f64", f64},
      {"i64", i64},
      {"bool", b},
      {"scalar_f32", scalar_tensor(2.5)},
      {"scalar_f64", scalar_tensor(-0.1, kFloat64)},
      {"scalar_i64", scalar_tensor(42, kInt64)},
      {"scalar_bool", scalar_tensor(1, kBool)},
      {"empty_f32", zeros({0, 3})},
      {"empty_f64", zeros({3, 0, 2}, kFloat64)},
      {"empty_i64", zeros({0}, kInt64)},
      {"empty_bool", zeros({2, 0}, kBool)},
      {"transposed", base.t()},                  // (5, 4), strides (1, 5)
      {"strided", base.slice(1, 0, 5, 2)},       // (4, 3), every other column
      {"expanded", randn({3, 1}, g, kFloat64).expand({3, 4})},  // stride 0
      {"offset_view", base.select(0, 2)},        // a row: storage offset 10
  };
  ASSERT_FALSE(in[12].second.is_contiguous());
  ASSERT_FALSE(in[13].second.is_contiguous());
  const std::string path = dir.file("all.safetensors");
  train::write_safetensors(path, in, {{"note", "round trip"}});
  train::SafetensorsContents out = train::read_safetensors(path);
  ASSERT_EQ(out.tensors.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out.tensors[i].first, in[i].first) << "tensors come back in the order they were written";
    EXPECT_TRUE(out.tensors[i].second.is_contiguous());
    EXPECT_TRUE(bit_equal(out.tensors[i].second, in[i].second)) << in[i].first;
  }
  EXPECT_EQ(out.tensors[4].second.dim(), 0);
  // The data section is 8-byte aligned (the header is padded with spaces).
  std::string bytes = read_bytes(path);
  EXPECT_EQ(split(bytes).header.size() % 8, 0u);
}

TEST(TrainCheckpointRoundTrip, MetadataRoundTripsAndCrcIsAdded) {
  TempDir dir;
  train::Metadata meta = {{"config", "vocab_size=65 dim=64"}, {"empty", ""}, {"unicode", "héllo ✓"}, {"quote\"key", "a\\b\nc"}};
  const std::string path = dir.file("m.safetensors");
  train::write_safetensors(path, {{"x", ones({2})}}, meta);
  train::SafetensorsContents out = train::read_safetensors(path);
  for (const auto& [k, v] : meta) {
    ASSERT_TRUE(out.metadata.count(k)) << k;
    EXPECT_EQ(out.metadata.at(k), v) << k;
  }
  EXPECT_TRUE(out.metadata.count("ember.crc32"));
  EXPECT_EQ(out.metadata.size(), meta.size() + 1);
  // No tensors at all is a valid file too.
  train::write_safetensors(path, {}, meta);
  EXPECT_TRUE(train::read_safetensors(path).tensors.empty());
}

TEST(TrainCheckpointRoundTrip, WriterRejectsBadNames) {
  TempDir dir;
  const std::string path = dir.file("bad.safetensors");
  expect_error([&] { train::write_safetensors(path, {{"a", ones({1})}, {"a", ones({1})}}); }, {path, "\"a\"", "twice"});
  expect_error([&] { train::write_safetensors(path, {{"__metadata__", ones({1})}}); }, {path, "invalid tensor name"});
  expect_error([&] { train::write_safetensors(path, {{"", ones({1})}}); }, {path, "invalid tensor name"});
  expect_error([&] { train::write_safetensors(path, {{"bad\xff", ones({1})}}); }, {path, "UTF-8"});
  expect_error([&] { train::write_safetensors(path, {{"x", ones({1})}}, {{"k", "\xc3"}}); }, {path, "UTF-8"});
  EXPECT_TRUE(dir.entries().empty()) << "nothing is left behind";
}

TEST(TrainCheckpointModule, NestedModuleRoundTripsEveryParameterAndBuffer) {
  TempDir dir;
  Net src(1), dst(2);
  ASSERT_FALSE(modules_bit_equal(src, dst));
  const std::string path = dir.file("net.safetensors");
  train::save(src, path, {{"who", "src"}});
  train::SafetensorsContents file = train::read_safetensors(path);
  std::vector<std::string> names;
  for (const auto& [n, t] : file.tensors) names.push_back(n);
  // A module's own parameters, then its children's, then the buffers.
  EXPECT_EQ(names, (std::vector<std::string>{"head", "enc.scale", "enc.empty_rows", "enc.inner.weight", "enc.inner.bias",
                                             "counts", "mask"}));
  train::Metadata meta = train::load(dst, path);
  EXPECT_EQ(meta.at("who"), "src");
  EXPECT_EQ(meta.at("ember.tied"), "");
  EXPECT_TRUE(modules_bit_equal(src, dst));
  // load copies values into the module's own tensors: they stay leaves that require grad.
  EXPECT_TRUE(dst.enc->inner->weight.requires_grad());
  EXPECT_TRUE(dst.enc->inner->weight.is_same(dst.enc->inner->parameter("weight")));
}

TEST(TrainCheckpointModule, TiedWeightsAreStoredOnceAndRestored) {
  TempDir dir;
  nn::GPT src(tiny_gpt_config(/*tie=*/true, 1)), dst(tiny_gpt_config(true, 2));
  ASSERT_TRUE(src.head->weight.is_same(src.embed->token->weight));
  const std::string path = dir.file("tied.safetensors");
  train::save(src, path);
  train::SafetensorsContents file = train::read_safetensors(path);
  int weights_vd = 0;
  for (const auto& [n, t] : file.tensors) {
    EXPECT_NE(n, "head.weight") << "the tied head is not stored again";
    if (t.shape() == Shape{11, 8}) ++weights_vd;
  }
  EXPECT_EQ(weights_vd, 1) << "the (V, D) matrix is in the file once";
  EXPECT_EQ(file.metadata.at("ember.tied"), "head.weight=embed.token.weight");
  train::load(dst, path);
  EXPECT_TRUE(modules_bit_equal(src, dst));
  EXPECT_TRUE(dst.head->weight.is_same(dst.embed->token->weight)) << "still one tensor after loading";

  // A tied file into an untied model: "ember.tied" says head.weight is the
  // token matrix, so both of the untied model's matrices get its values.
  nn::GPT untied(tiny_gpt_config(false, 3));
  train::load(untied, path);
  EXPECT_TRUE(bit_equal(untied.head->weight, src.embed->token->weight));
  EXPECT_FALSE(untied.head->weight.is_same(untied.embed->token->weight)) << "still two tensors";

  // An untied file into a tied model: two different matrices for one tensor.
  nn::GPT untied2(tiny_gpt_config(false, 4));
  const std::string upath = dir.file("untied.safetensors");
  train::save(untied2, upath);
  EXPECT_EQ(train::read_safetensors(upath).metadata.at("ember.tied"), "");
  expect_load_fails_unchanged(dst, upath, {upath, "\"embed.token.weight\"", "\"head.weight\"", "one tied tensor", "different values"},
                              "untied file into tied model");

  // A standard file of a tied model, without ember's key: the matrix once...
  train::SafetensorsContents c = train::read_safetensors(path);
  const std::string plain = dir.file("plain.safetensors");
  train::write_safetensors(plain, c.tensors);  // no "ember.tied"
  nn::GPT dst2(tiny_gpt_config(true, 5));
  train::load(dst2, plain);
  EXPECT_TRUE(modules_bit_equal(src, dst2));
  // ... or twice, as a PyTorch state dict has it: accepted when equal.
  train::NamedTensors both = c.tensors;
  both.emplace_back("head.weight", src.embed->token->weight);
  const std::string twice = dir.file("twice.safetensors");
  train::write_safetensors(twice, both);
  nn::GPT dst3(tiny_gpt_config(true, 6));
  train::load(dst3, twice);
  EXPECT_TRUE(modules_bit_equal(src, dst3));
  EXPECT_TRUE(dst3.head->weight.is_same(dst3.embed->token->weight));

  // Non-strict: what the file has loads; the rest keeps its values.
  nn::GPT untied3(tiny_gpt_config(false, 7));
  Tensor head_before = kernel::to(untied3.head->weight, kFloat32);
  train::NamedTensors no_head;
  for (auto& nt : c.tensors) no_head.push_back(nt);
  const std::string nohead = dir.file("nohead.safetensors");
  train::write_safetensors(nohead, no_head);  // and no ember.tied to find it by
  train::load(untied3, nohead, /*strict=*/false);
  EXPECT_TRUE(bit_equal(untied3.embed->token->weight, src.embed->token->weight));
  EXPECT_TRUE(bit_equal(untied3.head->weight, head_before));
  expect_load_fails_unchanged(untied3, nohead, {nohead, "\"head.weight\"", "missing"}, "strict: the head is missing");
}

TEST(TrainCheckpointModule, StrictAndNonStrictNames) {
  TempDir dir;
  Net src(1);
  const std::string full = dir.file("full.safetensors");
  train::save(src, full);
  train::SafetensorsContents c = train::read_safetensors(full);

  // Missing "head".
  train::NamedTensors missing;
  for (auto& nt : c.tensors)
    if (nt.first != "head") missing.push_back(nt);
  const std::string mpath = dir.file("missing.safetensors");
  train::write_safetensors(mpath, missing, {{"ember.tied", ""}});
  Net dst(2);
  expect_load_fails_unchanged(dst, mpath, {mpath, "\"head\"", "missing from"}, "strict missing");
  Tensor head_before = kernel::to(dst.head, kFloat32);
  train::load(dst, mpath, /*strict=*/false);
  EXPECT_TRUE(bit_equal(dst.head, head_before)) << "a missing tensor is left as it was";
  EXPECT_TRUE(bit_equal(dst.enc->inner->weight, src.enc->inner->weight)) << "the others are loaded";

  // An extra "ghost".
  train::NamedTensors extra = c.tensors;
  extra.emplace_back("ghost", ones({3}));
  const std::string epath = dir.file("extra.safetensors");
  train::write_safetensors(epath, extra, {{"ember.tied", ""}});
  Net dst2(3);
  expect_load_fails_unchanged(dst2, epath, {epath, "\"ghost\"", "does not have"}, "strict unexpected");
  train::load(dst2, epath, /*strict=*/false);
  EXPECT_TRUE(modules_bit_equal(src, dst2));
}

TEST(TrainCheckpointModule, ShapeAndDtypeMismatchesNameTheTensorAndBothSides) {
  TempDir dir;
  const std::string wide = dir.file("wide.safetensors");
  train::save(Net(1, /*in=*/2, /*out=*/4), wide);
  Net dst(2);
  std::string msg;
  {
    Snapshot before = snapshot(dst);
    // head is (out, 2): the first tensor checked.
    msg = expect_error([&] { train::load(dst, wide); }, {wide, "\"head\"", "(4, 2)", "(3, 2)"});
    expect_unchanged(dst, before, "shape mismatch");
  }
  const std::string f64 = dir.file("f64.safetensors");
  train::save(Net(1, 2, 3, /*head_dtype=*/kFloat64), f64);
  expect_load_fails_unchanged(dst, f64, {f64, "\"head\"", "float64", "float32"}, "dtype mismatch");
  // Non-strict does not excuse a mismatch.
  expect_load_fails_unchanged(dst, f64, {f64, "\"head\""}, "dtype mismatch, non-strict", /*strict=*/false);
}

TEST(TrainCheckpointModule, MissingFileNamesThePath) {
  TempDir dir;
  Net dst(2);
  const std::string path = dir.file("nope.safetensors");
  expect_load_fails_unchanged(dst, path, {path, "cannot open"}, "missing file");
}

// ---- damaged files, each made from a valid one ----

class TrainCheckpointInvalid : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("bad.safetensors");
    const std::string good = dir_.file("good.safetensors");
    train::save(Net(1), good, {{"note", "valid"}});
    valid_ = read_bytes(good);
    FileParts p = split(valid_);
    header_ = json::parse(p.header);
    data_ = p.data;
    // Sanity: the valid file loads.
    Net probe(5);
    train::load(probe, good);
  }
  // Writes bytes to bad.safetensors; the load must fail naming the file and
  // every part, with the module unchanged; read_safetensors fails the same way.
  void expect_bad(const std::string& bytes, std::initializer_list<std::string> parts, const std::string& what) {
    write_bytes(path_, bytes);
    std::vector<std::string> all{path_};
    all.insert(all.end(), parts.begin(), parts.end());
    SCOPED_TRACE(what);
    Snapshot before = snapshot(target_);
    std::string msg;
    try {
      train::load(target_, path_);
      ADD_FAILURE() << "loading a damaged file (" << what << ") did not throw";
    } catch (const Error& e) {
      msg = e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected ember::Error, got " << e.what();
    }
    for (const auto& p : all) EXPECT_NE(msg.find(p), std::string::npos) << "message \"" << msg << "\" lacks \"" << p << "\"";
    expect_unchanged(target_, before, what);
    // parse_safetensors gives the same verdict in memory.
    EXPECT_THROW(train::parse_safetensors(bytes, "mem"), Error);
  }
  // The header with one change, the same data (the crc still matches).
  json without_crc() const {
    json h = header_;
    h["__metadata__"].erase("ember.crc32");
    return h;
  }
  std::string first_tensor_with(const char* key, const json& v) {
    json h = header_;
    h["enc.inner.weight"][key] = v;
    return join(h, data_);
  }

  TempDir dir_;
  std::string path_, valid_, data_;
  json header_;
  Net target_{2};
};

TEST_F(TrainCheckpointInvalid, TruncatedAtEveryHeaderOffsetAndThroughTheData) {
  const size_t data_start = valid_.size() - data_.size();
  std::vector<size_t> cuts;
  for (size_t n = 0; n < data_start; ++n) cuts.push_back(n);
  for (size_t n = data_start; n < valid_.size(); n += 5) cuts.push_back(n);
  cuts.push_back(valid_.size() - 1);
  for (size_t n : cuts) expect_bad(valid_.substr(0, n), {"load"}, "truncated to " + std::to_string(n) + " bytes");
  expect_bad(valid_.substr(0, 5), {"5 bytes", "shorter than the 8-byte"}, "5 bytes");
  expect_bad(valid_.substr(0, 20), {"header length", "larger than the rest of the file"}, "cut in the header");
  expect_bad(valid_.substr(0, valid_.size() - 4), {"out of range"}, "cut in the data");
}

TEST_F(TrainCheckpointInvalid, HeaderLength) {
  FileParts p = split(valid_);
  expect_bad(le64(p.header.size() + 1000) + p.header + data_, {"larger than the rest of the file"}, "longer than the file");
  expect_bad(le64(train::kMaxHeaderBytes + 1) + p.header + data_, {"exceeds the limit"}, "over kMaxHeaderBytes");
  expect_bad(le64(~0ull) + p.header + data_, {"exceeds the limit"}, "2^64 - 1");
  expect_bad(le64(0) + data_, {"not valid UTF-8 JSON"}, "empty header");
}

TEST_F(TrainCheckpointInvalid, HeaderNotUtf8NotJsonNotAnObject) {
  std::string h = split(valid_).header;
  size_t at = h.find("valid");
  ASSERT_NE(at, std::string::npos);
  std::string bad_utf8 = h;
  bad_utf8[at] = '\xff';
  expect_bad(join(bad_utf8, data_), {"not valid UTF-8 JSON"}, "0xff in a string");
  std::string overlong = h;
  overlong.replace(at, 2, "\xc1\x81");  // an overlong encoding of 'A'
  expect_bad(join(overlong, data_), {"not valid UTF-8 JSON"}, "overlong UTF-8");
  std::string not_json = h;
  not_json[h.rfind('}')] = ' ';
  expect_bad(join(not_json, data_), {"not valid UTF-8 JSON"}, "unclosed object");
  expect_bad(join(std::string("{\"a\": 1,}"), data_), {"not valid UTF-8 JSON"}, "trailing comma");
  expect_bad(join(std::string("[1, 2]   "), data_), {"must be a JSON object"}, "an array");
  json m = header_;
  m["__metadata__"]["n"] = 3;
  expect_bad(join(m, data_), {"__metadata__ entry \"n\" is not a string"}, "metadata number");
  json m2 = header_;
  m2["__metadata__"] = "x";
  expect_bad(join(m2, data_), {"__metadata__ must be an object"}, "metadata string");
}

TEST_F(TrainCheckpointInvalid, WrongFieldTypes) {
  const std::string t = "\"enc.inner.weight\"";
  expect_bad(first_tensor_with("dtype", 7), {t, "unknown dtype 7"}, "dtype number");
  expect_bad(first_tensor_with("dtype", "F16"), {t, "unknown dtype \"F16\""}, "unknown dtype");
  expect_bad(first_tensor_with("dtype", "f32"), {t, "unknown dtype \"f32\""}, "lowercase dtype");
  expect_bad(first_tensor_with("shape", "2,3"), {t, "shape must be an array"}, "shape string");
  expect_bad(first_tensor_with("shape", json::array({2, 3.0})), {t, "invalid dim 3.0"}, "float dim");
  expect_bad(first_tensor_with("shape", json::array({-2, -3})), {t, "invalid dim -2"}, "negative dim");
  expect_bad(first_tensor_with("shape", json::array({2, "3"})), {t, "invalid dim \"3\""}, "string dim");
  expect_bad(first_tensor_with("data_offsets", json::array({0})), {t, "data_offsets must be two non-negative integers", "[0]"},
             "offsets of length 1");
  expect_bad(first_tensor_with("data_offsets", json::array({0, 24, 48})), {t, "data_offsets must be two"}, "offsets of length 3");
  expect_bad(first_tensor_with("data_offsets", json::array({-8, 24})), {t, "data_offsets must be two", "-8"}, "negative offset");
  expect_bad(first_tensor_with("data_offsets", json::array({0.0, 24.0})), {t, "data_offsets must be two"}, "float offsets");
  expect_bad(first_tensor_with("data_offsets", "0-24"), {t, "data_offsets must be two"}, "offsets string");
  json h = header_;
  h["enc.inner.weight"].erase("dtype");
  expect_bad(join(h, data_), {t, "needs dtype, shape and data_offsets"}, "no dtype");
  json h2 = header_;
  h2["enc.inner.weight"] = json::array({1, 2});
  expect_bad(join(h2, data_), {t, "needs dtype, shape and data_offsets"}, "entry not an object");
}

TEST_F(TrainCheckpointInvalid, ElementCountOverflow) {
  const std::string t = "\"enc.inner.weight\"";
  expect_bad(first_tensor_with("shape", json::array({1ll << 32, 1ll << 32})), {t, "more elements than int64"}, "2^64 elements");
  expect_bad(first_tensor_with("shape", json::array({std::numeric_limits<uint64_t>::max()})), {t, "invalid dim"}, "dim 2^64-1");
  // Zero elements, but strides that overflow.
  expect_bad(first_tensor_with("shape", json::array({0, 1ll << 62, 1ll << 62})), {t, "overflow"}, "zero-size, huge dims");
  // numel fits, numel x 4 bytes does not.
  expect_bad(first_tensor_with("shape", json::array({1ll << 62})), {t, "needs"}, "byte count overflow");
}

TEST_F(TrainCheckpointInvalid, DataOffsets) {
  // The file's layout: head [0, 24), enc.scale [24, 32), enc.empty_rows [32, 32), enc.inner.weight [32, 56), ...
  ASSERT_EQ(header_["head"]["data_offsets"], json::array({0, 24}));
  ASSERT_EQ(header_["enc.scale"]["data_offsets"], json::array({24, 32}));
  ASSERT_EQ(header_["enc.inner.weight"]["data_offsets"], json::array({32, 56}));
  const std::string t = "\"enc.inner.weight\"", b = "\"enc.scale\"";
  const uint64_t n = data_.size();
  expect_bad(first_tensor_with("data_offsets", json::array({n, n + 24})), {t, "out of range", std::to_string(n) + " bytes"},
             "beyond the data");
  expect_bad(first_tensor_with("data_offsets", json::array({56, 32})), {t, "out of range"}, "begin > end");
  json overlap = header_;
  overlap["enc.scale"]["data_offsets"] = json::array({20, 28});
  expect_bad(join(overlap, data_), {b, "overlaps"}, "overlapping");
  json gap = header_;
  gap["enc.scale"]["data_offsets"] = json::array({28, 36});  // and so the next ones overlap; the gap is found first
  expect_bad(join(gap, data_), {b, "starts at byte 28", "expected 24", "gap"}, "gap");
  json size = header_;
  size["enc.inner.weight"]["shape"] = json::array({2, 2});
  expect_bad(join(size, data_), {t, "has 24 bytes but shape (2, 2) of F32 needs 4 x 4"}, "size does not match shape");
  json dtype = header_;
  dtype["enc.inner.weight"]["dtype"] = "F64";
  expect_bad(join(dtype, data_), {t, "has 24 bytes but shape (2, 3) of F64 needs 6 x 8"}, "size does not match dtype");
  expect_bad(join(split(valid_).header, data_ + std::string(8, '\0')), {"8 trailing bytes"}, "trailing bytes");
  expect_bad(join(split(valid_).header, data_.substr(0, n - 1)), {"out of range"}, "a missing byte");
}

TEST_F(TrainCheckpointInvalid, DuplicateNames) {
  // The same name twice in the header text (a JSON parser would keep one silently).
  std::string h = header_.dump();
  std::string entry = "\"enc.scale\":" + header_["enc.scale"].dump() + ",";
  std::string dup = "{" + entry + h.substr(1);
  expect_bad(join(dup, data_), {"\"enc.scale\"", "appears twice"}, "duplicate tensor");
  std::string dup_meta = "{\"__metadata__\":{\"a\":\"b\"}," + h.substr(1);
  expect_bad(join(dup_meta, data_), {"\"__metadata__\"", "appears twice"}, "duplicate metadata");
}

TEST_F(TrainCheckpointInvalid, FlippedDataBytesFailTheChecksum) {
  for (size_t at : {size_t{0}, data_.size() / 2, data_.size() - 1}) {
    std::string d = data_;
    d[at] = static_cast<char>(d[at] ^ 0x10);
    expect_bad(join(split(valid_).header, d), {"checksum mismatch", "crc32", "corrupted"}, "flip at " + std::to_string(at));
  }
  // A checksum that is not what the data gives.
  json h = header_;
  h["__metadata__"]["ember.crc32"] = "deadbeef";
  expect_bad(join(h, data_), {"header says deadbeef"}, "wrong crc");
}

TEST_F(TrainCheckpointInvalid, BoolByteAboveOne) {
  // mask is the last tensor: 5 BOOL bytes at the end of the data.
  ASSERT_EQ(header_["mask"]["dtype"], "BOOL");
  uint64_t begin = header_["mask"]["data_offsets"][0].get<uint64_t>();
  std::string d = data_;
  d[begin + 3] = 2;
  // Without the crc (an external file), the BOOL check itself must catch it.
  expect_bad(join(without_crc(), d), {"\"mask\"", "BOOL byte 2 at element 3"}, "bool byte 2");
  d[begin + 3] = '\xff';
  expect_bad(join(without_crc(), d), {"\"mask\"", "BOOL byte 255"}, "bool byte 255");
  // With the crc, the same damage is a checksum mismatch.
  expect_bad(join(split(valid_).header, d), {"checksum mismatch"}, "bool byte, crc");
}

TEST_F(TrainCheckpointInvalid, ValidVariantsStillLoad) {
  // Things the format allows: no crc, no metadata, header padding, keys in any order.
  write_bytes(path_, join(without_crc(), data_));
  train::load(target_, path_);
  EXPECT_TRUE(modules_bit_equal(target_, Net(1)));
  json h = json::object();
  std::vector<std::string> keys;
  for (auto it = header_.begin(); it != header_.end(); ++it) keys.push_back(it.key());
  for (auto k = keys.rbegin(); k != keys.rend(); ++k) h[*k] = header_[*k];
  write_bytes(path_, join(h.dump() + std::string(13, ' '), data_));
  Net other(9);
  train::load(other, path_);
  EXPECT_TRUE(modules_bit_equal(other, Net(1)));
}

// ---- atomic saves ----

TEST(TrainCheckpointAtomic, FailedSaveKeepsThePreviousFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  train::save(Net(1), path);
  const std::string previous = read_bytes(path);
  // Failure points in the length, the header and the data of the new file.
  train::save(Net(2), dir.file("scratch"));
  const std::string next = read_bytes(dir.file("scratch"));
  fs::remove(dir.file("scratch"));
  const int64_t header_end = 8 + static_cast<int64_t>(split(next).header.size()), size = static_cast<int64_t>(next.size());
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{8}, int64_t{100}, header_end - 1, header_end, header_end + 10,
                    size - 1}) {
    SCOPED_TRACE("fail after " + std::to_string(n));
    ember::testing::fail_next_write_after(n);
    expect_error([&] { train::save(Net(2), path); }, {path, "write failed", "injected"});
    ember::testing::fail_next_write_after(-1);
    EXPECT_EQ(read_bytes(path), previous) << "the previous checkpoint is byte-identical";
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"}) << "no temporary file is left";
  }
  // The hook fires once: the next save works and replaces the file.
  train::save(Net(2), path);
  EXPECT_NE(read_bytes(path), previous);
  Net check(3);
  train::load(check, path);
  EXPECT_TRUE(modules_bit_equal(check, Net(2)));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"});
  // The file has the usual permissions (mkstemp's temporary is 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(static_cast<unsigned>(fs::status(path).permissions()), 0666u & ~mask);
}

TEST(TrainCheckpointAtomic, SaveIntoAMissingDirectoryNamesThePath) {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/model.safetensors");
  expect_error([&] { train::save(Net(1), path); }, {path, "cannot create a temporary file", "no/such/dir"});
  EXPECT_TRUE(dir.entries().empty());
}

// ---- resuming training ----

std::string resume_text() {
  std::string s;
  for (int i = 0; i < 20; ++i) s += "the quick brown fox jumps over the lazy dog; ";
  return s;
}
struct TinyRun {
  train::CharTokenizer tok = train::CharTokenizer::from_text(resume_text());
  nn::GPTConfig config() const {
    nn::GPTConfig c;
    c.vocab_size = tok.vocab_size();
    c.context_length = 16;
    c.dim = 16;
    c.heads = 2;
    c.layers = 1;
    c.dropout = 0.1;  // so the dropout generators' state matters
    c.seed = 11;
    return c;
  }
  train::TrainOptions options() const {
    train::TrainOptions o;
    o.steps = 200;
    o.batch = 4;
    o.warmup = 20;
    o.eval_every = 50;
    o.eval_batches = 2;
    o.seed = 5;
    return o;
  }
  std::vector<int64_t> tokens() const { return tok.encode(resume_text()); }
};

void expect_same_history(const std::vector<train::StepLog>& a, const std::vector<train::StepLog>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("history row " + std::to_string(i));
    EXPECT_EQ(a[i].step, b[i].step);
    // bitwise (the step-0 row holds NaN for what it has not: loss, lr, norm)
    EXPECT_EQ(std::memcmp(&a[i].loss, &b[i].loss, sizeof(double)), 0) << a[i].loss << " vs " << b[i].loss;
    EXPECT_EQ(std::memcmp(&a[i].lr, &b[i].lr, sizeof(double)), 0) << a[i].lr << " vs " << b[i].lr;
    EXPECT_EQ(std::memcmp(&a[i].grad_norm, &b[i].grad_norm, sizeof(double)), 0);
    ASSERT_EQ(a[i].val_loss.has_value(), b[i].val_loss.has_value());
    if (a[i].val_loss) {
      EXPECT_EQ(*a[i].val_loss, *b[i].val_loss);
    }
  }
}

TEST(TrainCheckpointResume, TwoHundredStepsEqualOneHundredSaveResumeOneHundred) {
  TinyRun run;
  TempDir dir;
  // Straight through.
  nn::GPT straight(run.config());
  train::Trainer a(straight, run.tokens(), run.options());
  while (!a.done()) a.step();
  // Half, save, and a new model and trainer resumed from the files.
  {
    nn::GPT first(run.config());
    train::Trainer b(first, run.tokens(), run.options());
    for (int i = 0; i < 100; ++i) b.step();
    b.save(dir.path(), {{"config", run.config().to_string()}});
  }
  nn::GPTConfig other_seed = run.config();
  other_seed.seed = 99;  // different initial weights and dropout seeds: resume must overwrite them all
  nn::GPT second(other_seed);
  train::Trainer c(second, run.tokens(), run.options());
  c.resume(dir.path());
  EXPECT_EQ(c.steps_done(), 100);
  ASSERT_EQ(c.history().size(), 101u);  // the step-0 row, then one per step
  while (!c.done()) c.step();
  EXPECT_TRUE(modules_bit_equal(straight, second)) << "parameters after resume differ from the straight run";
  expect_same_history(a.history(), c.history());
  EXPECT_TRUE(a.history().back().val_loss.has_value());
  EXPECT_EQ(a.history().front().step, 0);  // the untrained model's validation loss
  EXPECT_TRUE(a.history().front().val_loss.has_value());
  EXPECT_LT(a.history().back().loss, a.history()[1].loss) << "it did learn something";
}

class TrainCheckpointResumeErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    nn::GPT m(run_.config());
    train::Trainer t(m, run_.tokens(), run_.options());
    for (int i = 0; i < 3; ++i) t.step();
    t.save(at3_.path(), {});
    for (int i = 0; i < 2; ++i) t.step();
    t.save(at5_.path(), {});
  }
  // A fresh trainer's resume from dir must fail with parts, changing neither
  // the model nor the trainer's step count.
  void expect_resume_fails(const std::string& dir, std::initializer_list<std::string> parts) {
    nn::GPT m(run_.config());
    train::Trainer t(m, run_.tokens(), run_.options());
    t.step();
    Snapshot before = snapshot(m);
    expect_error([&] { t.resume(dir); }, parts);
    expect_unchanged(m, before, "failed resume");
    EXPECT_EQ(t.steps_done(), 1);
    EXPECT_EQ(t.history().size(), 2u);  // step 0 and step 1
    t.step();  // and it can go on training
  }
  // A file of the checkpoint that resume reads (in its step directory).
  static std::string in_checkpoint(const TempDir& dir, const std::string& name) {
    return train::latest_checkpoint(dir.path()).dir + "/" + name;
  }
  TinyRun run_;
  TempDir at3_, at5_;
};

TEST_F(TrainCheckpointResumeErrors, FilesFromDifferentSteps) {
  fs::copy_file(in_checkpoint(at5_, "train_state.safetensors"), in_checkpoint(at3_, "train_state.safetensors"),
                fs::copy_options::overwrite_existing);
  expect_resume_fails(at3_.path(), {at3_.path(), "model.safetensors is at step 3", "train_state.safetensors at step 5"});
}

// A step directory without both files is not a checkpoint (save renames it
// into place only when both are written): with no other, nothing to resume.
TEST_F(TrainCheckpointResumeErrors, MissingTrainState) {
  fs::remove(in_checkpoint(at3_, "train_state.safetensors"));
  expect_resume_fails(at3_.path(), {at3_.path(), "no complete checkpoint"});
}

TEST_F(TrainCheckpointResumeErrors, MissingOrDamagedModel) {
  fs::remove(in_checkpoint(at3_, "model.safetensors"));
  expect_resume_fails(at3_.path(), {at3_.path(), "no complete checkpoint"});
  const std::string model = in_checkpoint(at5_, "model.safetensors");
  std::string bytes = read_bytes(model);
  bytes[bytes.size() - 3] ^= 1;
  write_bytes(model, bytes);
  expect_resume_fails(at5_.path(), {model, "checksum mismatch"});
}

TEST_F(TrainCheckpointResumeErrors, BadStepMetadata) {
  const std::string state = in_checkpoint(at3_, "train_state.safetensors");
  train::SafetensorsContents st = train::read_safetensors(state);
  st.metadata.erase("ember.crc32");
  st.metadata["ember.step"] = "three";
  train::write_safetensors(state, st.tensors, st.metadata);
  expect_resume_fails(at3_.path(), {"train_state.safetensors", "ember.step", "\"three\""});
}

// A train_state without one of AdamW's slots (or a step counter) would
// resume and then quietly diverge from the run: it is refused instead.
TEST_F(TrainCheckpointResumeErrors, IncompleteOptimizerState) {
  for (const std::string drop : {"optim.0.0.exp_avg", "optim.1.2.step"}) {
    SCOPED_TRACE(drop);
    TempDir dir;
    fs::copy(at3_.path(), dir.path(), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    const std::string state = in_checkpoint(dir, "train_state.safetensors");
    train::SafetensorsContents st = train::read_safetensors(state);
    const size_t before = st.tensors.size();
    std::erase_if(st.tensors, [&](const auto& nt) { return nt.first == drop; });
    ASSERT_EQ(st.tensors.size(), before - 1);
    st.metadata.erase("ember.crc32");
    train::write_safetensors(state, st.tensors, st.metadata);
    expect_resume_fails(dir.path(), {"load_state", "lacks its", drop.substr(drop.rfind('.') + 1), "incomplete"});
  }
}

TEST_F(TrainCheckpointResumeErrors, ADifferentModel) {
  nn::GPTConfig wider = run_.config();
  wider.dim = 24;
  nn::GPT m(wider);
  train::Trainer t(m, run_.tokens(), run_.options());
  Snapshot before = snapshot(m);
  expect_error([&] { t.resume(at3_.path()); }, {"model.safetensors", "\"embed.token.weight\"", ", 16)", ", 24)"});
  expect_unchanged(m, before, "different model");
}

// ---- a run's checkpoints ----
// (The run directory's protocol alone, with plain files, is in
// tests/train_run_dir_test.cpp; here: what a trainer's checkpoint holds, and
// that a killed save of a real run resumes bit for bit.)

TEST(TrainCheckpointLayout, ATrainersCheckpointIsItsModelAndItsTrainingState) {
  TinyRun run;
  TempDir dir;
  nn::GPT m(run.config());
  train::Trainer t(m, run.tokens(), run.options());
  t.step();
  t.step();
  t.save(dir.path(), {{"note", "two steps"}});
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{".lock", "checkpoints", "latest", "model.safetensors",
                                                     "train_state.safetensors"}));
  const train::Checkpoint ck = train::latest_checkpoint(dir.path());
  EXPECT_EQ(ck.step, 2);
  EXPECT_EQ(ck.dir, dir.file("checkpoints/step-00000002"));
  EXPECT_EQ(ck.model, ck.dir + "/model.safetensors");
  EXPECT_EQ(ck.train_state, ck.dir + "/train_state.safetensors");
  EXPECT_EQ(read_bytes(ck.model), read_bytes(dir.file("model.safetensors")));
  const train::Metadata meta = train::read_safetensors(ck.model).metadata;
  EXPECT_EQ(meta.at("note"), "two steps");
  EXPECT_EQ(meta.at("ember.step"), "2");
  const train::TrainState st = train::read_train_state(ck.train_state);
  EXPECT_EQ(st.step, 2);
  EXPECT_EQ(st.optimizer_steps, 2);
  EXPECT_EQ(st.world_size, 1);
  ASSERT_EQ(st.history.size(), 3u);
  EXPECT_EQ(st.history[2].step, 2);
  EXPECT_EQ(std::memcmp(&st.history[2].loss, &t.history()[2].loss, sizeof(double)), 0);
  EXPECT_EQ(st.options, run.options().to_string());
  EXPECT_EQ(st.optimizer.size(), 3 * m.parameters().size()) << "exp_avg, exp_avg_sq and step per parameter";
  // A history whose step column says otherwise than its row (NaN, a huge value,
  // another step) is refused naming the file and the row, not cast blindly.
  for (double bad : {std::nan(""), 1e300, 5.0}) {
    const std::string path = dir.file("crafted.safetensors");
    train::SafetensorsContents f = train::read_safetensors(ck.train_state);
    for (auto& [name, tensor] : f.tensors)
      if (name == "history") tensor.data_ptr<double>()[1 * tensor.size(1)] = bad;  // row 1, the step column
    f.metadata.erase("ember.crc32");  // written anew for the changed bytes
    train::write_safetensors(path, f.tensors, f.metadata);
    expect_error([&] { train::read_train_state(path); }, "resume", {path, "history row 1"});
  }
}

// The process is killed (SIGKILL, by base/faults.h's test hook) before each
// file-system step of a save in turn: each write, fsync, rename, link and
// removal. Resuming must then find a complete checkpoint (the one before or
// the new one) and end, bit for bit, with the files an uninterrupted run
// writes; the next save removes what the killed one left behind.
TEST(TrainCheckpointCrash, AKillAtAnyStepOfASaveLeavesARunThatResumesExactly) {
  set_num_threads(1);  // no OpenMP thread pool exists when we fork
  TinyRun run;
  train::TrainOptions opts = run.options();
  opts.steps = 6;
  opts.eval_every = 3;
  auto train_to = [&](train::Trainer& t, int64_t step) {
    while (t.steps_done() < step) t.step();
  };
  // The uninterrupted run, saved at steps 2, 4 and 6.
  TempDir straight_dir;
  int64_t steps_per_save = 0;
  {
    nn::GPT m(run.config());
    train::Trainer t(m, run.tokens(), opts);
    train_to(t, 2);
    t.save(straight_dir.path(), {});
    train_to(t, 4);
    ember::testing::kill_at_fs_step(-1);  // just count
    t.save(straight_dir.path(), {});
    steps_per_save = ember::testing::fs_steps();
    train_to(t, 6);
    t.save(straight_dir.path(), {});
  }
  const std::string want_model = read_bytes(straight_dir.file("model.safetensors")),
                    want_state = read_bytes(straight_dir.file("train_state.safetensors"));
  ASSERT_GT(steps_per_save, 10) << "a save has writes, fsyncs, renames and links";
  std::set<int64_t> resumed_from;
  for (int64_t k = 0; k < steps_per_save; ++k) {
    SCOPED_TRACE("killed before file-system step " + std::to_string(k) + " of " + std::to_string(steps_per_save));
    TempDir dir;
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      nn::GPT m(run.config());
      train::Trainer t(m, run.tokens(), opts);
      train_to(t, 2);
      t.save(dir.path(), {});
      train_to(t, 4);
      ember::testing::kill_at_fs_step(k);
      t.save(dir.path(), {});
      _exit(3);  // not reached: the hook kills first
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
    nn::GPT m(run.config());
    train::Trainer t(m, run.tokens(), opts);
    ASSERT_NO_THROW(t.resume(dir.path()));
    EXPECT_TRUE(t.steps_done() == 2 || t.steps_done() == 4) << t.steps_done();
    resumed_from.insert(t.steps_done());
    train_to(t, 4);
    t.save(dir.path(), {});
    train_to(t, 6);
    t.save(dir.path(), {});
    EXPECT_EQ(read_bytes(dir.file("model.safetensors")), want_model);
    EXPECT_EQ(read_bytes(dir.file("train_state.safetensors")), want_state);
    EXPECT_EQ(dir.entries(), (std::vector<std::string>{".lock", "checkpoints", "latest", "model.safetensors",
                                                       "train_state.safetensors"}))
        << "a killed save's leftovers are removed by the next save";
    std::vector<std::string> inside;
    for (const auto& e : fs::directory_iterator(dir.file("checkpoints"))) inside.push_back(e.path().filename().string());
    EXPECT_EQ(inside, std::vector<std::string>{"step-00000006"});
  }
  EXPECT_EQ(resumed_from, (std::set<int64_t>{2, 4})) << "early kills resume from step 2, late ones from step 4";
}

// ---- a file made outside ember (tests/fixtures/make_safetensors_fixture.py) ----

TEST(TrainCheckpointExternal, ReadsAFileWrittenByHandInPython) {
  const std::string path = std::string(EMBER_FIXTURE_DIR) + "/external.safetensors";
  train::SafetensorsContents c = train::read_safetensors(path);
  EXPECT_EQ(c.metadata, (train::Metadata{{"format", "pt"}, {"source", "make_safetensors_fixture.py"}}));
  // Header order (not sorted, and not the order of the data).
  std::vector<std::string> names;
  for (const auto& [n, t] : c.tensors) names.push_back(n);
  ASSERT_EQ(names, (std::vector<std::string>{"zeta.f64", "alpha.i64", "mid.bool", "beta.f32", "empty.f32", "scalar.i64"}));
  auto get = [&](size_t i) { return c.tensors[i].second; };
  EXPECT_TRUE(bit_equal(get(0), tensor(std::vector<double>{0.1, -2.5, 1e300, -0.0, 3.0, 1.0 / 3.0}, {3, 2})));
  EXPECT_TRUE(bit_equal(get(1), tensor(std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -1, 0, 7,
                                                            std::numeric_limits<int64_t>::max()})));
  EXPECT_TRUE(bit_equal(get(2), tensor(std::vector<bool>{true, false, true, true, false, false}, {2, 3})));
  EXPECT_TRUE(bit_equal(get(3), tensor({0.5f, -1.25f, 3.0f, 1e-3f, -7.0f, 65504.0f, 0.1f, 2.0f}, {2, 2, 2})));
  EXPECT_TRUE(bit_equal(get(4), zeros({2, 0})));
  EXPECT_TRUE(bit_equal(get(5), scalar_tensor(-42, kInt64)));
}

}  // namespace
