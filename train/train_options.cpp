#include "train/train_options.h"

namespace ember::train {

// (Every train_state's "ember.train" has them all.)
const TextFields<TrainOptions>& train_option_fields() {
  using O = TrainOptions;
  static const TextFields<TrainOptions> fields(
      "TrainOptions",
      {int_field("steps", &O::steps), int_field("batch", &O::batch), real_field("lr", &O::lr),
       real_field("min_lr", &O::min_lr), int_field("warmup", &O::warmup),
       int_field("lr_decay_steps", &O::lr_decay_steps), real_field("weight_decay", &O::weight_decay),
       real_field("grad_clip", &O::grad_clip), int_field("eval_every", &O::eval_every),
       int_field("eval_batches", &O::eval_batches), real_field("val_fraction", &O::val_fraction),
       uint_field("seed", &O::seed)});
  return fields;
}

std::string options_without_steps(const TrainOptions& o) {
  std::string out;
  for (const TextField<TrainOptions>& f : train_option_fields().fields())
    if (f.key != "steps") out += (out.empty() ? "" : " ") + f.key + "=" + f.print(o);
  return out;
}

std::string TrainOptions::to_string() const { return train_option_fields().to_string(*this); }

TrainOptions TrainOptions::from_string(const std::string& s) { return train_option_fields().from_string(s); }

std::vector<std::string> differing_options(const TrainOptions& run, const TrainOptions& given) {
  std::vector<std::string> out;
  for (const TextField<TrainOptions>& f : train_option_fields().fields()) {
    if (f.key == "steps") continue;
    const std::string a = f.print(run), b = f.print(given);
    if (a != b) out.push_back(f.key + ": " + a + " in the run, " + b + " given");
  }
  return out;
}

}  // namespace ember::train
