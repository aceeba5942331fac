// A job in which one rank fails: rank 1 throws before step 3 while rank 0
// goes on into the step's all-reduce, where it would wait for rank 1
// forever. The way train_gpt handles it (examples::run prints the error with
// the rank, then distributed::abort ends the whole job) must end both ranks with a
// clear message; tests/distributed/CMakeLists.txt runs this under a timeout,
// with every rank keeping everything and (argument "zero2") with ZeRO stage
// 2, where rank 0 waits in a reduce-scatter instead.
#include <cstdio>
#include <memory>
#include <string>

#include "common/program.h"
#include "distributed/data_parallel.h"
#include "distributed/zero.h"
#include "ember.h"

using namespace ember;

int main(int argc, char** argv) {
  const bool zero = argc > 1 && std::string(argv[1]) == "zero2";
  distributed::init();
  const int status = examples::run(
      "fail_one_rank", distributed::where(),
      [&] {
        std::string text;
        for (int i = 0; i < 40; ++i) text += "the quick brown fox jumps over the lazy dog; ";
        train::CharTokenizer tok = train::CharTokenizer::from_text(text);
        nn::GPTConfig c;
        c.vocab_size = tok.vocab_size();
        c.context_length = 16;
        c.dim = 16;
        c.heads = 2;
        c.layers = 1;
        nn::GPT model(c);
        train::TrainOptions o;
        o.steps = 10;
        o.batch = 4;
        std::unique_ptr<distributed::DataParallel> ddp =
            zero ? std::make_unique<distributed::Zero>(model.parameters(), distributed::ZeroOptions{.stage = 2})
                 : std::make_unique<distributed::DataParallel>(model.parameters());
        train::Trainer trainer(model, tok.encode(text), o);
        trainer.set_replicas(*ddp);
        while (!trainer.done()) {
          if (distributed::rank() == 1 && trainer.steps_done() == 2)
            throw Error("injected failure: rank 1 stops before step 3 while rank 0 waits for it");
          trainer.step();
        }
        std::printf("fail_one_rank: rank %d finished all steps (it should not have)\n", distributed::rank());
        return 0;
      },
      [] { distributed::abort(1); });
  distributed::finalize();
  return status;
}
