// The run directory's protocol (train/run_dir.h) alone, with plain files: a
// checkpoint is two small text files that say which step wrote them, so a
// mix of two saves is seen at once.
//
// The crash tests kill a child process (SIGKILL, by base/faults.h's hook)
// before each file-system step of a save in turn, then look at what it left:
// the previous complete checkpoint or the new one, never a mix, and nothing
// that the next save does not remove.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "base/faults.h"
#include "base/io.h"
#include "test_util.h"
#include "train/run_dir.h"

namespace {

using namespace ember;
using ember::test::expect_error;
using ember::test::TempDir;
using train::RunDir;
namespace fs = std::filesystem;


// The sorted names in a directory (hidden ones included).
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

const std::vector<std::string> kFiles = {"a.txt", "b.txt"};
std::string text_of(const std::string& file, int64_t step) { return file + " of step " + std::to_string(step) + "\n"; }

// Writes the checkpoint of `step`: each file says its name and the step.
RunDir::WriteFiles files_of(int64_t step) {
  return [step](const std::string& dir) {
    for (const std::string& f : kFiles) {
      const std::string text = text_of(f, step);
      write_file_atomically(dir + "/" + f, {text}, "test");
    }
  };
}

// The step whose files `dir` holds: every file must be there and say the same
// step (-1 and a test failure otherwise).
int64_t step_in(const std::string& dir) {
  int64_t found = -1;
  for (const std::string& f : kFiles) {
    const std::string text = read_text(dir + "/" + f);
    const std::string prefix = f + " of step ";
    if (text.rfind(prefix, 0) != 0) {
      ADD_FAILURE() << dir << "/" << f << " holds \"" << text << "\"";
      return -1;
    }
    const int64_t step = std::stoll(text.substr(prefix.size()));
    if (text != text_of(f, step) || (found >= 0 && step != found)) {
      ADD_FAILURE() << dir << ": a mix of two saves (" << f << " is from step " << step << ", not " << found << ")";
      return -1;
    }
    found = step;
  }
  return found;
}

// What a run directory holds after a save of `step` that nothing interrupted.
void expect_clean_run(const TempDir& dir, int64_t step) {
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{".lock", "a.txt", "b.txt", "checkpoints", "latest"}));
  EXPECT_EQ(entries(dir.file("checkpoints")), std::vector<std::string>{RunDir::step_name(step)});
  EXPECT_EQ(fs::read_symlink(dir.file("latest")), fs::path("checkpoints") / RunDir::step_name(step));
  for (const std::string& f : kFiles) EXPECT_EQ(fs::read_symlink(dir.file(f)), fs::path("latest") / f);
  EXPECT_EQ(step_in(dir.path()), step) << "the stable names read the new checkpoint";
}

// ---- names ----

TEST(TrainRunDir, StepNamesAndTheNamesThatAreNotSteps) {
  EXPECT_EQ(RunDir::step_name(0), "step-00000000");
  EXPECT_EQ(RunDir::step_name(200), "step-00000200");
  EXPECT_EQ(RunDir::step_name(123456789), "step-123456789");  // more than 8 digits when needed
  for (int64_t s : {int64_t{0}, int64_t{7}, int64_t{200}, int64_t{99999999}, int64_t{123456789}, int64_t{999999999999999999}})
    EXPECT_EQ(RunDir::step_of(RunDir::step_name(s)), s);
  EXPECT_EQ(RunDir::step_of("step-1"), 1);  // the padding is not required
  EXPECT_EQ(RunDir::step_of("step-000000000000000001"), 1);
  EXPECT_EQ(RunDir::step_of("step-999999999999999999"), 999999999999999999);  // 18 digits: the most
  for (const char* bad : {"", "step", "step-", "step-0000000000000000001", "step-99999999999999999999", "step-12a",
                          "step-1 ", "step- 1", "step--1", "step-+1", "step-0x10", "Step-00000001", "xstep-00000001",
                          ".step-00000001", ".step-00000001.1234", "step-00000001.1234", "latest"})
    EXPECT_EQ(RunDir::step_of(bad), -1) << "\"" << bad << "\"";
}

TEST(TrainRunDir, FileNamesMustBePlainAndDistinct) {
  TempDir dir;
  expect_error([&] { RunDir(dir.path(), {}); }, "RunDir", {dir.path(), "at least one file"});
  for (const char* bad : {"", "sub/a.txt", ".a.txt", "/abs"})
    expect_error([&] { RunDir(dir.path(), {"ok.txt", bad}); }, "RunDir", {"\"" + std::string(bad) + "\"", "plain file name"});
  expect_error([&] { RunDir(dir.path(), {"a.txt", "b.txt", "a.txt"}); }, "RunDir", {"\"a.txt\"", "named twice"});
  EXPECT_TRUE(entries(dir.path()).empty());
}

// ---- saving ----

// A save never removes a later checkpoint than its own: it is refused,
// naming both steps, and the directory stays as it was.
TEST(TrainRunDir, ASaveOfAnEarlierStepThanTheNewestIsRefused) {
  TempDir dir;
  const RunDir run(dir.path(), kFiles);
  run.save(500, files_of(500));
  expect_error([&] { run.save(10, files_of(10)); }, "save", {dir.path(), "step 500", "step 10"});
  expect_clean_run(dir, 500);
}

// A directory in the layout before checkpoints/ (the files at its top) keeps
// its checkpoint readable when a save into it fails before writing a step.
TEST(TrainRunDir, AFailedSaveIntoTheOldLayoutLeavesItsCheckpointReadable) {
  TempDir dir;
  for (const std::string& f : kFiles) write_file_atomically(dir.file(f), {text_of(f, 0)}, "test");
  const RunDir run(dir.path(), kFiles);
  ASSERT_TRUE(run.newest().has_value());
  fs::create_directories(dir.file("checkpoints"));  // what a save cut short before its first step leaves
  ASSERT_TRUE(run.newest().has_value());
  EXPECT_EQ(run.latest().step, 0);
  EXPECT_EQ(step_in(run.latest().dir), 0);
}

TEST(TrainRunDir, ASaveLeavesOneStepDirectoryLatestAndStableNames) {
  TempDir dir;
  const RunDir run(dir.path(), kFiles);
  run.save(1, files_of(1));
  expect_clean_run(dir, 1);
  run.save(2, files_of(2));
  expect_clean_run(dir, 2);  // the step-1 checkpoint is removed once step 2 is saved
  const RunDir::Found found = run.latest();
  EXPECT_EQ(found.step, 2);
  EXPECT_EQ(found.dir, dir.file("checkpoints/step-00000002"));
  EXPECT_EQ(found.file("a.txt"), dir.file("checkpoints/step-00000002/a.txt"));
  EXPECT_EQ(step_in(found.dir), 2);
}

TEST(TrainRunDir, AStepAlreadySavedIsKeptAsItIs) {
  TempDir dir;
  const RunDir run(dir.path(), kFiles);
  run.save(3, files_of(3));
  int calls = 0;
  run.save(3, [&](const std::string& d) {
    ++calls;
    files_of(4)(d);
  });
  EXPECT_EQ(calls, 0) << "the files of a saved step are not written again";
  expect_clean_run(dir, 3);
}

TEST(TrainRunDir, AFailedSaveLeavesTheRunAsItWas) {
  TempDir dir;
  const RunDir run(dir.path(), kFiles);
  run.save(1, files_of(1));
  // The writer throws after one file.
  expect_error([&] {
    run.save(2, [](const std::string& d) {
      write_file_atomically(d + "/a.txt", {text_of("a.txt", 2)}, "test");
      EMBER_FAIL("test writer", "disk full");
    });
  }, "test writer", {"disk full"});
  expect_clean_run(dir, 1);
  // The writer leaves a file out: not a checkpoint.
  expect_error([&] {
    run.save(2, [](const std::string& d) { write_file_atomically(d + "/a.txt", {text_of("a.txt", 2)}, "test"); });
  }, "save", {"b.txt", "not written", dir.path()});
  expect_clean_run(dir, 1);
  // A write fails inside write_file_atomically.
  ember::testing::fail_next_write_after(3);
  expect_error([&] { run.save(2, files_of(2)); }, "test", {"write failed", "injected"});
  ember::testing::fail_next_write_after(-1);
  expect_clean_run(dir, 1);
  EXPECT_EQ(run.latest().step, 1);
}

TEST(TrainRunDir, BadStepsAndPathsAreRefused) {
  TempDir dir;
  const RunDir run(dir.file("run"), kFiles);
  expect_error([&] { run.save(-1, files_of(-1)); }, "save", {dir.file("run"), "step -1", "negative"});
  EXPECT_TRUE(entries(dir.path()).empty()) << "nothing is made for a refused save";
  { std::ofstream(dir.file("plain")) << "a file, not a directory"; }
  const RunDir on_a_file(dir.file("plain"), kFiles);
  expect_error([&] { on_a_file.save(1, files_of(1)); }, "save", {dir.file("plain"), "cannot create the directory"});
  EXPECT_EQ(read_text(dir.file("plain")), "a file, not a directory");
}

// ---- finding the latest ----

TEST(TrainRunDir, LatestIsTheHighestCompleteStepAndIgnoresOtherNames) {
  TempDir dir;
  const RunDir run(dir.path(), kFiles);
  run.save(2, files_of(2));
  // Beside it, by hand: directories whose names are not steps (each holding
  // a complete set of files, of a higher "step"), a regular file with a step
  // name, and a step directory without one of its files.
  for (const char* name : {"step-99999999999999999999", "step-12a", "step--5", "step-00000009x", ".step-00000010.77"}) {
    fs::create_directories(dir.file(std::string("checkpoints/") + name));
    files_of(50)(dir.file(std::string("checkpoints/") + name));
  }
  { std::ofstream(dir.file("checkpoints/step-00000009")) << "a file"; }
  fs::create_directories(dir.file("checkpoints/step-00000008"));
  write_file_atomically(dir.file("checkpoints/step-00000008/a.txt"), {text_of("a.txt", 8)}, "test");
  const RunDir::Found found = run.latest();
  EXPECT_EQ(found.step, 2);
  EXPECT_EQ(step_in(found.dir), 2);
  // The next save removes the other step names and the staging leftover, and
  // keeps what is not the protocol's.
  run.save(3, files_of(3));
  EXPECT_EQ(entries(dir.file("checkpoints")), (std::vector<std::string>{"step--5", "step-00000003", "step-00000009x",
                                                                       "step-12a", "step-99999999999999999999"}));
  EXPECT_EQ(run.latest().step, 3);
}

TEST(TrainRunDir, LatestErrorsAndTheLayoutBeforeStepDirectories) {
  TempDir dir;
  const RunDir missing(dir.file("nope"), kFiles);
  expect_error([&] { (void)missing.latest(); }, "resume", {dir.file("nope"), "not a directory"});
  fs::create_directories(dir.file("empty/checkpoints"));
  const RunDir empty(dir.file("empty"), kFiles);
  expect_error([&] { (void)empty.latest(); }, "resume", {dir.file("empty"), "no complete checkpoint", "checkpoints"});
  // Files side by side, no checkpoints/: the run directory itself, as step 0.
  fs::create_directories(dir.file("flat"));
  files_of(6)(dir.file("flat"));
  const RunDir flat(dir.file("flat"), kFiles);
  EXPECT_EQ(flat.latest().step, 0);
  EXPECT_EQ(flat.latest().dir, dir.file("flat"));
  EXPECT_EQ(step_in(flat.latest().dir), 6);
  // Saving into it turns the files into stable names of the new checkpoint.
  flat.save(7, files_of(7));
  EXPECT_EQ(fs::read_symlink(dir.file("flat/a.txt")), fs::path("latest/a.txt"));
  EXPECT_EQ(flat.latest().step, 7);
  EXPECT_EQ(step_in(dir.file("flat")), 7);
}

// ---- leftovers ----

TEST(TrainRunDir, TheNextSaveRemovesWhatKilledSavesLeft) {
  TempDir dir;
  const RunDir run(dir.path(), kFiles);
  run.save(1, files_of(1));
  // What a killed save leaves: a staging directory (with a file in it), a
  // temporary link, a temporary file; and things that are not leftovers.
  fs::create_directories(dir.file("checkpoints/.step-00000002.12345"));
  files_of(2)(dir.file("checkpoints/.step-00000002.12345"));
  fs::create_symlink("checkpoints/step-00000002", dir.file(".latest.tmp.12345.0"));
  { std::ofstream(dir.file(".a.txt.tmp.AbC123")) << "half"; }
  { std::ofstream(dir.file("loss.csv")) << "step,loss\n"; }
  { std::ofstream(dir.file(".notes")) << "kept"; }
  { std::ofstream(dir.file("x.tmp.1")) << "kept: not hidden"; }
  EXPECT_EQ(run.latest().step, 1) << "a staging directory is never a checkpoint";
  run.save(2, files_of(2));
  EXPECT_EQ(entries(dir.path()),
            (std::vector<std::string>{".lock", ".notes", "a.txt", "b.txt", "checkpoints", "latest", "loss.csv", "x.tmp.1"}));
  EXPECT_EQ(entries(dir.file("checkpoints")), std::vector<std::string>{"step-00000002"});
  EXPECT_EQ(step_in(dir.path()), 2);
  // remove_leftovers alone does the same, and touches no checkpoint.
  fs::create_directories(dir.file("checkpoints/.step-00000003.1"));
  run.remove_leftovers();
  EXPECT_EQ(entries(dir.file("checkpoints")), std::vector<std::string>{"step-00000002"});
}

// ---- a kill at every file-system step ----

// Runs `work` in a child process that the fault hook kills before
// file-system step k of its last save; returns once the child is dead.
template <typename F>
void run_killed_at(int64_t k, F work) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      work(k);
    } catch (...) {
      _exit(4);
    }
    _exit(3);  // not reached: the hook kills first
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the child exited with status " << status;
}

// The file-system steps of a save from step `from` to step `to`.
int64_t steps_of_a_save(int64_t from, int64_t to) {
  TempDir dir;
  const RunDir run(dir.path(), kFiles);
  if (from >= 0) run.save(from, files_of(from));
  ember::testing::kill_at_fs_step(-1);  // just count
  run.save(to, files_of(to));
  return ember::testing::fs_steps();
}

TEST(TrainRunDirCrash, AKillAtEveryStepLeavesThePreviousCheckpointOrTheNewNeverAMix) {
  const int64_t steps = steps_of_a_save(1, 2);
  // 2 files x (create, write, fsync, rename, fsync dir), the staging directory
  // made, flushed and renamed, the checkpoints/ flush, `latest` (link,
  // rename, flush) and the step-1 checkpoint removed; the stable names exist.
  EXPECT_EQ(steps, 2 * 5 + 4 + 3 + 1);
  std::set<int64_t> seen;
  for (int64_t k = 0; k < steps; ++k) {
    SCOPED_TRACE("killed before file-system step " + std::to_string(k) + " of " + std::to_string(steps));
    TempDir dir;
    const RunDir run(dir.path(), kFiles);
    run_killed_at(k, [&](int64_t at) {
      run.save(1, files_of(1));
      ember::testing::kill_at_fs_step(at);
      run.save(2, files_of(2));
    });
    const RunDir::Found found = run.latest();
    EXPECT_TRUE(found.step == 1 || found.step == 2) << found.step;
    EXPECT_EQ(step_in(found.dir), found.step);
    seen.insert(found.step);
    // The stable names read one complete checkpoint too: the one `latest`
    // points at, which is never newer than the newest complete one.
    const int64_t through_latest = step_in(dir.path());
    EXPECT_TRUE(through_latest == 1 || through_latest == found.step) << through_latest;
    // The next save removes what the killed one left.
    run.save(3, files_of(3));
    expect_clean_run(dir, 3);
  }
  EXPECT_EQ(seen, (std::set<int64_t>{1, 2})) << "early kills keep step 1, late ones have step 2";
}

TEST(TrainRunDirCrash, AKilledFirstSaveLeavesNoCheckpointOrAWholeOne) {
  const int64_t steps = steps_of_a_save(-1, 1);
  EXPECT_EQ(steps, 2 * 5 + 4 + 3 + 2 * 3) << "as a later save, with the two stable names made and nothing removed";
  std::set<int64_t> seen;
  for (int64_t k = 0; k < steps; ++k) {
    SCOPED_TRACE("killed before file-system step " + std::to_string(k) + " of " + std::to_string(steps));
    TempDir dir;
    const RunDir run(dir.path(), kFiles);
    run_killed_at(k, [&](int64_t at) {
      ember::testing::kill_at_fs_step(at);
      run.save(1, files_of(1));
    });
    try {
      const RunDir::Found found = run.latest();
      EXPECT_EQ(found.step, 1);
      EXPECT_EQ(step_in(found.dir), 1);
      seen.insert(1);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no complete checkpoint"), std::string::npos) << e.what();
      seen.insert(-1);
    }
    run.save(1, files_of(1));
    expect_clean_run(dir, 1);
  }
  EXPECT_EQ(seen, (std::set<int64_t>{-1, 1}));
}

}  // namespace
