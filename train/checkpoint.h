/// @file
/// Model checkpoints on the safetensors format (train/safetensors.h): a
/// module's parameters and buffers by dotted name, its tied weights recorded,
/// and, for a GPT, what rebuilds it (its config and its vocabulary).
///
/// Loading goes in two steps so that nothing changes unless everything fits:
/// plan_load checks every name, shape, dtype and tie against the module and
/// returns the copies to make; commit() makes them.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/gpt.h"
#include "nn/module.h"
#include "train/safetensors.h"
#include "train/tokenizer.h"

namespace ember::train {

/// Every parameter and buffer by dotted name (a tied tensor once, the tie in
/// metadata "ember.tied" as "alias=name;..."), plus the caller's metadata and
/// the checkpoint format ("ember.format").
void save(const nn::Module& module, const std::string& path, const Metadata& metadata = {});

/// The checked copies that load a file's tensors into a module.
struct LoadPlan {
  std::vector<std::pair<Tensor, Tensor>> copies;  // (module tensor, file tensor)
  void commit() const;                            // cannot fail: every pair was checked
};
/// Checks the file's format (a newer one than this ember writes is refused),
/// names (strict: no missing and no unexpected tensors), shapes and
/// dtypes against the module, and that a tensor the model ties is given
/// consistently (once, or under both names with equal values; the file's
/// "ember.tied" resolves aliases); changes nothing. Errors name `path`.
LoadPlan plan_load(const nn::Module& module, const SafetensorsContents& file, const std::string& path,
                   bool strict = true);
/// read_safetensors + plan_load + commit: on any error the module is exactly
/// as it was. Returns the file's metadata.
Metadata load(nn::Module& module, const std::string& path, bool strict = true);

// ---- GPT checkpoints: the metadata that rebuilds the model ----
inline constexpr const char* kConfigKey = "ember.config";  // nn::GPTConfig::to_string()
// (and the tokenizer's keys: train/tokenizer.h)

Metadata gpt_metadata(const nn::GPTConfig& config, const Tokenizer& tokenizer);
struct GPTInfo {
  nn::GPTConfig config;
  Tokenizer tokenizer;
};
/// The config and tokenizer recorded in a checkpoint's metadata; an error
/// naming `path` and the key when one is missing or they disagree.
GPTInfo gpt_info(const Metadata& metadata, const std::string& path);

struct LoadedGPT {
  std::unique_ptr<nn::GPT> model;
  Tokenizer tokenizer;
  Metadata metadata;
};
/// Builds the GPT that `path` describes and loads its weights. A checkpoint
/// of format 1 (train/train_state.h: kCheckpointFormat) loads too: its names
/// are those of today's GPT once upgrade_gpt_names has renamed them.
LoadedGPT load_gpt(const std::string& path);

/// The names of a GPT checkpoint of an older format, as the GPT names them
/// now (tensor names and the aliases of "ember.tied"); a file of the current
/// format is left as it is. Format 1 named the blocks block0., block1., ...;
/// since format 2 they live in a ModuleList, blocks.0., blocks.1., ... (as a
/// PyTorch port names them). An ember::Error naming `path` for a format this
/// ember does not read. The migration of a format is this one function: a
/// future renaming adds its step here.
void upgrade_gpt_names(SafetensorsContents& file, const std::string& path);

}  // namespace ember::train
