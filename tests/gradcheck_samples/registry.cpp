#include "registry.h"

namespace ember::samples {

namespace {
std::vector<OpInfo> all_families() {
  std::vector<OpInfo> ops;
  add_view_samples(ops);
  add_join_samples(ops);
  add_binary_samples(ops);
  add_unary_samples(ops);
  add_select_samples(ops);
  add_reduce_samples(ops);
  add_matmul_samples(ops);
  add_index_samples(ops);
  add_fused_samples(ops);
  add_nn_embedding_samples(ops);
  add_nn_layer_samples(ops);
  add_nn_recurrent_samples(ops);
  add_nn_attention_samples(ops);
  return ops;
}

// Built on first use (a function-local static, initialized exactly once).
std::vector<OpInfo>& registry() {
  static std::vector<OpInfo> ops = all_families();
  return ops;
}
}  // namespace

const std::vector<OpInfo>& op_registry() { return registry(); }

void register_op(OpInfo info) {
  EMBER_CHECK(!info.name.empty(), "register_op", "an op needs a name");
  EMBER_CHECK(info.fn && info.samples, "register_op", "op '" << info.name << "' needs both fn and samples");
  for (const OpInfo& op : registry())
    EMBER_CHECK(op.name != info.name, "register_op", "an op named '" << info.name << "' is already registered");
  registry().push_back(std::move(info));
}

}  // namespace ember::samples
