// Settings as text (nn/text_fields.h): each kind of field on a struct made
// for the test, then the two tables the library keeps, GPTConfig's and
// TrainOptions', as checkpoints store them: their exact text, their round
// trips, and one error per kind of field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/gpt.h"
#include "nn/text_fields.h"
#include "test_util.h"
#include "train/trainer.h"

namespace {

using namespace ember;
using ember::test::expect_error;

enum class Shape3 { Cube, Ball, Cone };
struct Toy {
  int64_t count = 3;
  uint64_t seed = 7;
  double rate = 0.5;
  Shape3 shape = Shape3::Ball;
  bool on = true;
};
const nn::TextFields<Toy>& toy_fields() {
  static const nn::TextFields<Toy> fields(
      "Toy", {nn::int_field("count", &Toy::count), nn::uint_field("seed", &Toy::seed), nn::real_field("rate", &Toy::rate, 4),
              nn::choice_field("shape", &Toy::shape, {{"cube", Shape3::Cube}, {"ball", Shape3::Ball}, {"cone", Shape3::Cone}}),
              nn::choice_field("on", &Toy::on, {{"no", false}, {"yes", true}})});
  return fields;
}

TEST(NnTextFields, EveryKindPrintsInTableOrderAndReadsBack) {
  EXPECT_EQ(toy_fields().to_string(Toy{}), "count=3 seed=7 rate=0.5 shape=ball on=yes");
  Toy t{-12, 18446744073709551615ull, 1.0 / 3.0, Shape3::Cone, false};
  EXPECT_EQ(toy_fields().to_string(t), "count=-12 seed=18446744073709551615 rate=0.3333 shape=cone on=no");
  const Toy r = toy_fields().from_string(toy_fields().to_string(t));
  EXPECT_EQ(r.count, -12);
  EXPECT_EQ(r.seed, 18446744073709551615ull);
  EXPECT_EQ(r.rate, 0.3333) << "4 digits: what the field was given";
  EXPECT_EQ(r.shape, Shape3::Cone);
  EXPECT_FALSE(r.on);
  // Any order; a missing key keeps the default; a repeated key: the last wins;
  // whitespace of any kind separates.
  const Toy s = toy_fields().from_string("  on=no\tcount=5\ncount=6 ");
  EXPECT_EQ(s.count, 6);
  EXPECT_FALSE(s.on);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.shape, Shape3::Ball);
  EXPECT_EQ(toy_fields().from_string("").count, 3);
  EXPECT_EQ(toy_fields().field("rate").key, "rate");
}

TEST(NnTextFields, EveryKindFailsNamingTheKeyAndTheText) {
  expect_error([] { toy_fields().from_string("count=1 seed"); }, "Toy", {"malformed entry \"seed\" in \"count=1 seed\""});
  expect_error([] { toy_fields().from_string("size=3"); }, "Toy", {"unknown key \"size\""});
  expect_error([] { toy_fields().from_string("=3"); }, "Toy", {"unknown key \"\""});
  expect_error([] { toy_fields().from_string("count=3.5"); }, "Toy", {"bad value \"3.5\" for count", "an integer"});
  expect_error([] { toy_fields().from_string("count="); }, "Toy", {"bad value \"\" for count"});
  expect_error([] { toy_fields().from_string("count=99999999999999999999"); }, "Toy", {"bad value", "count"});
  expect_error([] { toy_fields().from_string("seed=-1"); }, "Toy", {"bad value \"-1\" for seed", "non-negative"});
  expect_error([] { toy_fields().from_string("rate=0.1.2"); }, "Toy", {"bad value \"0.1.2\" for rate", "a number"});
  expect_error([] { toy_fields().from_string("rate=inf"); }, "Toy", {"bad value \"inf\" for rate"});
  expect_error([] { toy_fields().from_string("shape=cylinder"); }, "Toy",
               {"shape must be cube, ball or cone, got cylinder"});
  expect_error([] { toy_fields().from_string("on=1"); }, "Toy", {"on must be no or yes, got 1"});
  // A value outside the choices prints as "?", which no read accepts.
  Toy odd;
  odd.shape = static_cast<Shape3>(9);
  EXPECT_EQ(toy_fields().to_string(odd), "count=3 seed=7 rate=0.5 shape=? on=yes");
  expect_error([&] { toy_fields().from_string(toy_fields().to_string(odd)); }, "Toy", {"got ?"});
}

TEST(NnTextFields, OneOfAndRealText) {
  EXPECT_EQ(nn::one_of({"a"}), "a");
  EXPECT_EQ(nn::one_of({"a", "b"}), "a or b");
  EXPECT_EQ(nn::one_of({"a", "b", "c", "d"}), "a, b, c or d");
  EXPECT_EQ(nn::real_text(0.1, 15), "0.1");
  EXPECT_EQ(nn::real_text(3e-5, 15), "3e-05");
  EXPECT_EQ(nn::real_text(1.0 / 3.0, 6), "0.333333");
  EXPECT_EQ(nn::real_text(-0.0, 6), "-0");
  EXPECT_EQ(nn::real_text(1000, 15), "1000");
}

// ---- the tables checkpoints store ----

// The exact text of the defaults: every checkpoint written so far has its
// config and options in this form, and reading them must go on working.
TEST(NnTextFields, GptConfigAndTrainOptionsKeepTheirText) {
  EXPECT_EQ(nn::GPTConfig{}.to_string(),
            "vocab_size=65 context_length=64 dim=64 heads=4 layers=2 dropout=0 positional=learned tie_weights=1 seed=0 "
            "dtype=float32");
  EXPECT_EQ(train::TrainOptions{}.to_string(),
            "steps=1000 batch=32 lr=0.003 min_lr=0.0003 warmup=50 lr_decay_steps=0 weight_decay=0.1 grad_clip=1 "
            "eval_every=100 eval_batches=8 val_fraction=0.1 seed=0");
  nn::GPTConfig c;
  c.dropout = 0.123456789;  // the config keeps 6 digits
  EXPECT_NE(c.to_string().find("dropout=0.123457 "), std::string::npos) << c.to_string();
  train::TrainOptions o;
  o.lr = 0.123456789012345678;  // the options keep 15
  EXPECT_NE(o.to_string().find("lr=0.123456789012346 "), std::string::npos) << o.to_string();
}

TEST(NnTextFields, TrainOptionsRoundTrip) {
  train::TrainOptions o;
  o.steps = 7;
  o.batch = 3;
  o.lr = 2.5e-4;
  o.min_lr = 2.5e-5;
  o.warmup = 0;
  o.lr_decay_steps = 600;
  o.weight_decay = 0;
  o.grad_clip = 0.5;
  o.eval_every = 9;
  o.eval_batches = 1;
  o.val_fraction = 0.25;
  o.seed = 18446744073709551615ull;
  const train::TrainOptions r = train::TrainOptions::from_string(o.to_string());
  EXPECT_EQ(r.to_string(), o.to_string());
  EXPECT_EQ(r.steps, 7);
  EXPECT_EQ(r.lr, 2.5e-4);
  EXPECT_EQ(r.min_lr, 2.5e-5);
  EXPECT_EQ(r.lr_decay_steps, 600);
  EXPECT_EQ(r.grad_clip, 0.5);
  EXPECT_EQ(r.val_fraction, 0.25);
  EXPECT_EQ(r.seed, 18446744073709551615ull);
  EXPECT_TRUE(train::differing_options(r, o).empty());
  // A missing key keeps its default.
  EXPECT_EQ(train::TrainOptions::from_string("batch=5").batch, 5);
  EXPECT_EQ(train::TrainOptions::from_string("batch=5").warmup, train::TrainOptions{}.warmup);
}

TEST(NnTextFields, TrainOptionsErrorsOnePerKindOfField) {
  using train::TrainOptions;
  expect_error([] { TrainOptions::from_string("steps=3 batch"); }, "TrainOptions", {"malformed entry \"batch\" in \"steps=3 batch\""});
  expect_error([] { TrainOptions::from_string("epochs=3"); }, "TrainOptions", {"unknown key \"epochs\""});
  expect_error([] { TrainOptions::from_string("batch=big"); }, "TrainOptions", {"bad value \"big\" for batch"});
  expect_error([] { TrainOptions::from_string("warmup=1e3"); }, "TrainOptions", {"bad value \"1e3\" for warmup"});
  expect_error([] { TrainOptions::from_string("lr=0.1.2"); }, "TrainOptions", {"bad value \"0.1.2\" for lr"});
  expect_error([] { TrainOptions::from_string("grad_clip=nan"); }, "TrainOptions", {"bad value \"nan\" for grad_clip"});
  expect_error([] { TrainOptions::from_string("seed=-1"); }, "TrainOptions", {"bad value \"-1\" for seed"});
}

TEST(NnTextFields, DifferingOptionsNameEachKeyButSteps) {
  train::TrainOptions run, given;
  given.steps = 5000;  // how far to train may change
  EXPECT_TRUE(train::differing_options(run, given).empty());
  given.lr = 1e-3;
  given.seed = 4;
  given.batch = 8;
  EXPECT_EQ(train::differing_options(run, given),
            (std::vector<std::string>{"batch: 32 in the run, 8 given", "lr: 0.003 in the run, 0.001 given",
                                      "seed: 0 in the run, 4 given"}));
}

}  // namespace
