// Settings as text (base/text_fields.h): each kind of field on a struct made
// for the test, then the two tables the library keeps, GPTConfig's and
// TrainOptions', as checkpoints store them: their exact text, their round
// trips, and one error per kind of field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/parse.h"
#include "base/text_fields.h"
#include "nn/gpt.h"
#include "test_util.h"
#include "train/train_options.h"

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
const TextFields<Toy>& toy_fields() {
  static const TextFields<Toy> fields(
      "Toy", {int_field("count", &Toy::count), uint_field("seed", &Toy::seed), real_field("rate", &Toy::rate),
              choice_field("shape", &Toy::shape, {{"cube", Shape3::Cube}, {"ball", Shape3::Ball}, {"cone", Shape3::Cone}}),
              choice_field("on", &Toy::on, {{"no", false}, {"yes", true}})});
  return fields;
}

TEST(NnTextFields, EveryKindPrintsInTableOrderAndReadsBack) {
  EXPECT_EQ(toy_fields().to_string(Toy{}), "count=3 seed=7 rate=0.5 shape=ball on=yes");
  Toy t{-12, 18446744073709551615ull, 1.0 / 3.0, Shape3::Cone, false};
  EXPECT_EQ(toy_fields().to_string(t), "count=-12 seed=18446744073709551615 rate=0.3333333333333333 shape=cone on=no");
  const Toy r = toy_fields().from_string(toy_fields().to_string(t));
  EXPECT_EQ(r.count, -12);
  EXPECT_EQ(r.seed, 18446744073709551615ull);
  EXPECT_EQ(r.rate, 1.0 / 3.0) << "every bit of it";
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
  EXPECT_EQ(one_of({"a"}), "a");
  EXPECT_EQ(one_of({"a", "b"}), "a or b");
  EXPECT_EQ(one_of({"a", "b", "c", "d"}), "a, b, c or d");
  // The shortest text that reads back as the same double.
  EXPECT_EQ(real_text(0.1), "0.1");
  EXPECT_EQ(real_text(3e-5), "3e-05");
  EXPECT_EQ(real_text(1000), "1000");
  EXPECT_EQ(real_text(-0.0), "-0");
  EXPECT_EQ(real_text(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(real_text(0.003 / 10), "0.00030000000000000003") << "lr / 10 is not 0.0003";
  EXPECT_EQ(real_text(5e-324), "5e-324");
}

// Every double a checkpoint may hold comes back bit for bit: the values a run
// computes (lr / 10), the smallest and largest, denormals, negative zero.
TEST(NnTextFields, RealTextRoundTripsEveryBit) {
  auto bits = [](double v) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  const double lr = 3e-3;
  const std::vector<double> values = {lr / 10, 0.1, 0.1 + 0.2, 1.0 / 3.0, 2.0 / 3.0, 1e-300, 1e300, 1e-5 / 7,
                                      std::numeric_limits<double>::max(), std::nextafter(std::numeric_limits<double>::max(), 0.0),
                                      std::numeric_limits<double>::min(),          // the smallest normal
                                      std::numeric_limits<double>::denorm_min(),   // 5e-324
                                      std::numeric_limits<double>::min() / 3,      // a denormal
                                      std::numeric_limits<double>::epsilon(), 1 + std::numeric_limits<double>::epsilon(),
                                      -0.0, 0.0, -lr / 10, -1e-310, 123456789012345678.0, 0.123456789012345678};
  for (double v : values) {
    const std::string text = real_text(v);
    const double back = parse_double(text, "test", "v");
    EXPECT_EQ(bits(back), bits(v)) << text;
  }
  // Through a field and a struct, the same.
  for (double v : values) {
    Toy t;
    t.rate = v;
    EXPECT_EQ(bits(toy_fields().from_string(toy_fields().to_string(t)).rate), bits(v)) << v;
  }
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
  // Every digit a value needs, and no more.
  nn::GPTConfig c;
  c.dropout = 0.123456789;
  EXPECT_NE(c.to_string().find("dropout=0.123456789 "), std::string::npos) << c.to_string();
  EXPECT_EQ(nn::GPTConfig::from_string(c.to_string()).dropout, 0.123456789);
  train::TrainOptions o;
  o.lr = 0.123456789012345678;
  EXPECT_NE(o.to_string().find("lr=0.12345678901234568 "), std::string::npos) << o.to_string();
}

TEST(NnTextFields, TrainOptionsRoundTrip) {
  train::TrainOptions o;
  o.steps = 7;
  o.batch = 3;
  o.lr = 6e-4;
  o.min_lr = o.lr / 10;  // as train_gpt sets it: 5.9999999999999995e-05, which 15 digits print as 6e-05
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
  EXPECT_EQ(r.lr, 6e-4);
  EXPECT_EQ(r.min_lr, o.lr / 10);
  EXPECT_NE(r.min_lr, 6e-5) << "the test needs a value that 15 digits do not keep";
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
