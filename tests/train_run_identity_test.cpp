// A run directory holds one run, written by one process at a time, in a
// checkpoint format that says which it is:
//   * the lock: a second process is refused at once, naming the holder, and a
//     killed holder leaves no lock behind;
//   * a save refuses a directory that holds another run's checkpoint;
//     remove_run clears a run (and nothing else) for a fresh one;
//   * a resumed run's files equal an uninterrupted run's byte for byte
//     (train_state included: its options are stored to the last bit);
//   * a checkpoint of format 1 (tests/data/format1_gpt, blocks named block0.)
//     loads and resumes; a format newer than this ember's is refused by name.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "ember.h"
#include "test_util.h"

namespace {

using namespace ember;
using ember::test::expect_error;
using ember::test::TempDir;
namespace fs = std::filesystem;


std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string bytes_of_tensor(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.raw_data()), static_cast<size_t>(c.numel()) * dtype_size(c.dtype()));
}

std::string corpus() {
  std::string s;
  for (int i = 0; i < 12; ++i) s += "a small run directory holds one run; ";
  return s;
}
struct Tiny {
  train::CharTokenizer tok = train::CharTokenizer::from_text(corpus());
  nn::GPTConfig config() const {
    nn::GPTConfig c;
    c.vocab_size = tok.vocab_size();
    c.context_length = 8;
    c.dim = 8;
    c.heads = 2;
    c.layers = 1;
    c.seed = 3;
    return c;
  }
  train::TrainOptions options(double lr = 3e-3) const {
    train::TrainOptions o;
    o.steps = 12;
    o.batch = 2;
    o.warmup = 2;
    o.lr = lr;
    o.min_lr = lr / 10;  // as train_gpt sets it: not a short decimal
    o.eval_every = 4;
    o.eval_batches = 1;
    return o;
  }
  std::vector<int64_t> tokens() const { return tok.encode(corpus()); }
};

// ---- one process at a time ----

TEST(TrainRunLock, ASecondProcessIsRefusedNamingTheHolderAndAKilledHolderLeavesNoLock) {
  TempDir dir;
  const train::RunDir run(dir.path(), {"a.txt"});
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the holder: takes the lock, says so, waits to be killed
    ::close(ready[0]);
    const train::RunLock hold = run.lock();
    if (::write(ready[1], "x", 1) != 1) ::_exit(2);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  expect_error([&] { (void)run.lock(); }, "lock",
               {dir.path(), "is in use by process " + std::to_string(child) + " (", "one process at a time"});
  expect_error([&] { run.save(1, [](const std::string& d) { write_file_atomically(d + "/a.txt", {"1"}, "test"); }); },
               "save", {"is in use by process " + std::to_string(child)});
  EXPECT_FALSE(fs::exists(dir.file("checkpoints/step-00000001"))) << "the refused save wrote nothing";
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  // The kernel dropped the holder's flock with the process: the lock file is
  // still there, and the directory is free.
  EXPECT_TRUE(fs::exists(dir.file(".lock")));
  train::RunLock mine = run.lock();
  EXPECT_TRUE(mine.held());
  train::RunLock again = run.lock();  // this process may hold it twice (a save inside a program's hold)
  run.save(1, [](const std::string& d) { write_file_atomically(d + "/a.txt", {"1"}, "test"); });
  EXPECT_EQ(bytes_of(dir.file("a.txt")), "1");
}

// The lock file is a regular file that ember wrote: a symbolic link (the
// run would write its pid into the link's target), a second name of another
// file, a FIFO or a file of other bytes is refused, and left as it was; an
// empty lock file, or one a dead holder left, is taken.
TEST(TrainRunLock, ALockFileThatIsNotOneEmberWroteIsRefusedAndLeftAsItIs) {
  TempDir dir;
  const std::string victim = dir.file("victim.txt");
  write_file_atomically(victim, {"precious\n"}, "test");
  auto run_at = [&](const std::string& name) {
    fs::create_directories(dir.file(name));
    return train::RunDir(dir.file(name), {"a.txt"});
  };
  const train::RunDir linked = run_at("linked");
  fs::create_symlink(victim, dir.file("linked/.lock"));
  expect_error([&] { (void)linked.lock(); }, "lock", {dir.file("linked/.lock"), "is a symbolic link"});
  expect_error([&] { linked.save(1, [](const std::string& d) { write_file_atomically(d + "/a.txt", {"1"}, "test"); }); },
               "save", {"is a symbolic link"});
  EXPECT_FALSE(fs::exists(dir.file("linked/checkpoints/step-00000001")));
  const train::RunDir dangling = run_at("dangling");
  fs::create_symlink(dir.file("nowhere"), dir.file("dangling/.lock"));
  expect_error([&] { (void)dangling.lock(); }, "lock", {"is a symbolic link"});
  EXPECT_FALSE(fs::exists(dir.file("nowhere"))) << "a dangling link's target is not created";
  const train::RunDir hard = run_at("hard");
  fs::create_hard_link(victim, dir.file("hard/.lock"));
  expect_error([&] { (void)hard.lock(); }, "lock", {"not a lock file ember wrote", "2 names"});
  const train::RunDir fifo = run_at("fifo");
  ASSERT_EQ(::mkfifo(dir.file("fifo/.lock").c_str(), 0644), 0);
  expect_error([&] { (void)fifo.lock(); }, "lock", {"not a lock file ember wrote", "not a regular file"});
  const train::RunDir foreign = run_at("foreign");
  write_file_atomically(dir.file("foreign/.lock"), {"my notes\n"}, "test");
  expect_error([&] { (void)foreign.lock(); }, "lock", {"not a lock file ember wrote", "not a lock record"});
  EXPECT_EQ(bytes_of(victim), "precious\n");
  EXPECT_EQ(bytes_of(dir.file("foreign/.lock")), "my notes\n");
  // what ember leaves behind is taken again
  const train::RunDir empty = run_at("empty");
  write_file_atomically(dir.file("empty/.lock"), {""}, "test");
  EXPECT_TRUE(empty.lock().held());
  const train::RunDir stale = run_at("stale");
  write_file_atomically(dir.file("stale/.lock"), {"999999999 train_gpt\n"}, "test");
  EXPECT_TRUE(stale.lock().held());
  EXPECT_EQ(bytes_of(dir.file("stale/.lock")).substr(0, std::to_string(::getpid()).size() + 1),
            std::to_string(::getpid()) + " ");
}

// ---- one run per directory ----

TEST(TrainRunIdentity, ASaveRefusesADirectoryHoldingAnotherRun) {
  Tiny t;
  TempDir dir;
  nn::GPT a_model(t.config()), b_model(t.config());
  train::Trainer a(a_model, t.tokens(), t.options(3e-3)), b(b_model, t.tokens(), t.options(1e-3));
  EXPECT_NE(a.run_id(), b.run_id()) << "another lr is another run";
  for (int i = 0; i < 2; ++i) a.step(), b.step();
  a.save(dir.path(), {});
  const std::string model_before = bytes_of(dir.file("model.safetensors"));
  expect_error([&] { b.save(dir.path(), {}); }, "save",
               {dir.path(), "holds a checkpoint of another run (run " + a.run_id() + ", at step 2)", "this is run " + b.run_id()});
  EXPECT_EQ(bytes_of(dir.file("model.safetensors")), model_before) << "the first run's model is kept";
  // The same definition is the same run: a saves on.
  a.step();
  a.save(dir.path(), {});
  EXPECT_EQ(train::latest_checkpoint(dir.path()).step, 3);
  // What a fresh run must clear: the run's names, and nothing else.
  write_file_atomically(dir.file("loss.csv"), {"step\n"}, "test");
  write_file_atomically(dir.file("notes.txt"), {"mine"}, "test");
  const train::RunDir run = train::gpt_run_dir(dir.path());
  EXPECT_EQ(run.run_files({"loss.csv", "loss.png"}),
            (std::vector<std::string>{"checkpoints", "latest", "model.safetensors", "train_state.safetensors", "loss.csv"}));
  run.remove_run({"loss.csv", "loss.png"});
  EXPECT_TRUE(run.run_files({"loss.csv"}).empty());
  EXPECT_EQ(bytes_of(dir.file("notes.txt")), "mine");
  b.save(dir.path(), {});  // now it may
  EXPECT_EQ(train::run_summary(dir.path())->run_id, b.run_id());
}

TEST(TrainRunIdentity, AResumedRunsFilesEqualAnUninterruptedRunsByteForByte) {
  Tiny t;
  TempDir straight, resumed;
  {
    nn::GPT m(t.config());
    train::Trainer a(m, t.tokens(), t.options());
    while (!a.done()) a.step();
    a.save(straight.path(), {});
  }
  {
    nn::GPT m(t.config());
    train::Trainer b(m, t.tokens(), t.options());
    for (int i = 0; i < 5; ++i) b.step();
    b.save(resumed.path(), {});
  }
  nn::GPT m(t.config());
  train::Trainer c(m, t.tokens(), t.options());
  c.resume(resumed.path());
  while (!c.done()) c.step();
  c.save(resumed.path(), {});
  for (const char* f : {"model.safetensors", "train_state.safetensors"})
    EXPECT_EQ(bytes_of(straight.file(f)), bytes_of(resumed.file(f))) << f;
  // The reason it holds: min_lr = lr / 10 is stored with every digit it needs.
  const train::TrainState st = train::read_train_state(resumed.file("train_state.safetensors"));
  EXPECT_EQ(train::TrainOptions::from_string(*st.options).min_lr, 3e-3 / 10);
  EXPECT_NE(st.options->find("min_lr=0.00030000000000000003 "), std::string::npos) << *st.options;
}

// ---- checkpoint formats ----

const std::string kFormat1 = std::string(EMBER_SOURCE_DIR) + "/tests/data/format1_gpt";

std::string format2_name(const std::string& old) {  // block7.x -> blocks.7.x, by hand
  if (old.rfind("block", 0) != 0 || old.rfind("blocks.", 0) == 0) return old;
  return "blocks." + old.substr(5);
}

TEST(TrainCheckpointFormat, AFormat1CheckpointLoadsUnderTodaysNames) {
  const train::SafetensorsContents raw = train::read_safetensors(kFormat1 + "/model.safetensors");
  ASSERT_EQ(raw.metadata.count("ember.format"), 0u) << "the fixture is of format 1";
  int old_names = 0;
  for (const auto& [name, _] : raw.tensors) old_names += name.rfind("block0.", 0) == 0 || name.rfind("block1.", 0) == 0;
  ASSERT_GT(old_names, 10) << "two blocks named the old way";
  const train::LoadedGPT g = train::load_gpt(kFormat1 + "/model.safetensors");
  EXPECT_EQ(g.model->config().layers, 2);
  std::map<std::string, Tensor> have;
  for (const auto& [n, p] : g.model->named_parameters(/*dedup=*/false)) have[n] = p;
  for (const auto& [n, b] : g.model->named_buffers()) have[n] = b;
  for (const auto& [name, t] : raw.tensors) {
    SCOPED_TRACE(name);
    auto it = have.find(format2_name(name));
    ASSERT_NE(it, have.end());
    EXPECT_EQ(bytes_of_tensor(it->second), bytes_of_tensor(t));
  }
}

TEST(TrainCheckpointFormat, AFormat1RunResumesAndIsSavedInFormat2) {
  const std::string text = train::read_text_file(kFormat1 + "/corpus.txt");
  const train::CharTokenizer tok = train::CharTokenizer::from_text(text);
  const train::GPTInfo info = train::gpt_info(train::read_safetensors(kFormat1 + "/model.safetensors").metadata,
                                              kFormat1 + "/model.safetensors");
  train::TrainOptions o = train::Trainer::saved_options(kFormat1);
  o.steps += 2;
  nn::GPT m(info.config);
  train::Trainer t(m, tok.encode(text), o);
  t.resume(kFormat1);
  EXPECT_EQ(t.steps_done(), 4);
  EXPECT_EQ(t.history().size(), 5u);
  t.step();
  t.step();
  TempDir out;
  t.save(out.path(), train::gpt_metadata(info.config, tok));
  const train::SafetensorsContents saved = train::read_safetensors(out.file("model.safetensors"));
  EXPECT_EQ(saved.metadata.at("ember.format"), "2");
  bool new_names = false;
  for (const auto& [name, _] : saved.tensors) new_names |= name.rfind("blocks.1.", 0) == 0;
  EXPECT_TRUE(new_names);
  EXPECT_EQ(train::load_gpt(out.file("model.safetensors")).model->config().layers, 2);
}

TEST(TrainCheckpointFormat, AFormatNewerThanThisEmbersIsRefusedByName) {
  TempDir dir;
  train::SafetensorsContents f = train::read_safetensors(kFormat1 + "/model.safetensors");
  f.metadata["ember.format"] = "4";
  f.metadata.erase("ember.crc32");
  train::write_safetensors(dir.file("m.safetensors"), f.tensors, f.metadata);
  expect_error([&] { (void)train::load_gpt(dir.file("m.safetensors")); }, "load",
               {"m.safetensors is of checkpoint format 4", "reads formats 1 to 3", "written by a newer ember"});
  f.metadata["ember.format"] = "0";
  train::write_safetensors(dir.file("m.safetensors"), f.tensors, f.metadata);
  expect_error([&] { (void)train::load_gpt(dir.file("m.safetensors")); }, "load", {"checkpoint format 0"});
}

}  // namespace
