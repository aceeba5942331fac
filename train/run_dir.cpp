#include "train/run_dir.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "tensor/error.h"
#include "tensor/io.h"
#include "tensor/machine/faults.h"

namespace ember::train {

namespace fs = std::filesystem;

namespace {
// Removes a path and everything under it (one file-system step).
void remove_tree(const fs::path& p) {
  testing::fs_step();
  std::error_code ec;
  fs::remove_all(p, ec);  // best effort: a leftover is removed again next time
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
}  // namespace

RunDir::RunDir(std::string path, std::vector<std::string> files) : path_(std::move(path)), files_(std::move(files)) {
  EMBER_CHECK(!files_.empty(), "RunDir", path_ << ": a checkpoint needs at least one file");
  for (size_t i = 0; i < files_.size(); ++i) {
    const std::string& f = files_[i];
    EMBER_CHECK(!f.empty() && f[0] != '.' && f.find('/') == std::string::npos, "RunDir",
                path_ << ": \"" << f << "\" is not a plain file name (non-empty, no '/', not starting with '.')");
    EMBER_CHECK(std::find(files_.begin(), files_.begin() + static_cast<std::ptrdiff_t>(i), f) ==
                    files_.begin() + static_cast<std::ptrdiff_t>(i),
                "RunDir", path_ << ": the file \"" << f << "\" is named twice");
  }
}

std::string RunDir::step_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step-%08lld", static_cast<long long>(step));
  return buf;
}

int64_t RunDir::step_of(const std::string& name) {
  // At most 18 digits: every such number fits int64 (< 10^18 < 2^63).
  if (name.size() < 6 || !starts_with(name, "step-") || name.size() > 5 + 18) return -1;
  int64_t v = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    v = v * 10 + (name[i] - '0');
  }
  return v;
}

std::string RunDir::Found::file(const std::string& name) const { return (fs::path(dir) / name).string(); }

void RunDir::save(int64_t step, const WriteFiles& write) const {
  EMBER_CHECK(step >= 0, "save", path_ << ": step " << step << " is negative");
  const fs::path checkpoints = fs::path(path_) / "checkpoints";
  std::error_code ec;
  fs::create_directories(checkpoints, ec);
  EMBER_CHECK(!ec, "save", checkpoints.string() << ": cannot create the directory: " << ec.message());
  remove_leftovers();
  if (!fs::is_directory(checkpoints / step_name(step), ec)) write_step(step, write);
  point_latest_at(step);
  // The other checkpoints are no longer needed: the new one is complete and current.
  for (const auto& e : fs::directory_iterator(checkpoints, ec)) {
    const int64_t s = step_of(e.path().filename().string());
    if (s >= 0 && s != step) remove_tree(e.path());
  }
}

void RunDir::write_step(int64_t step, const WriteFiles& write) const {
  const fs::path checkpoints = fs::path(path_) / "checkpoints";
  const std::string name = step_name(step);
  const fs::path staging = checkpoints / ("." + name + "." + std::to_string(::getpid()));
  std::error_code ec;
  testing::fs_step();
  fs::create_directory(staging, ec);
  EMBER_CHECK(!ec, "save", staging.string() << ": cannot create the directory: " << ec.message());
  try {
    write(staging.string());
    for (const std::string& f : files_)
      EMBER_CHECK(fs::is_regular_file(staging / f, ec), "save",
                  (staging / f).string() << ": not written; a checkpoint of " << path_ << " needs every one of its files");
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  fsync_directory(staging.string());
  testing::fs_step();
  fs::rename(staging, checkpoints / name, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove_all(staging, ec);
    EMBER_FAIL("save", (checkpoints / name).string() << ": rename failed: " << why);
  }
  fsync_directory(checkpoints.string());
}

void RunDir::point_latest_at(int64_t step) const {
  const fs::path run(path_);
  replace_symlink_atomically("checkpoints/" + step_name(step), (run / "latest").string(), "save");
  // The stable names point through `latest`: made once, then left alone.
  std::error_code ec;
  for (const std::string& file : files_) {
    const fs::path link = run / file;
    if (!fs::is_symlink(link, ec) || fs::read_symlink(link, ec) != fs::path("latest") / file)
      replace_symlink_atomically("latest/" + file, link.string(), "save");
  }
}

void RunDir::remove_leftovers() const {
  const fs::path run(path_);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(run / "checkpoints", ec))
    if (starts_with(e.path().filename().string(), ".step-")) remove_tree(e.path());
  for (const auto& e : fs::directory_iterator(run, ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() > 1 && n[0] == '.' && n.find(".tmp.") != std::string::npos) remove_tree(e.path());
  }
}

RunDir::Found RunDir::latest() const {
  const fs::path run(path_), checkpoints = run / "checkpoints";
  std::error_code ec;
  if (fs::is_directory(checkpoints, ec)) {
    auto complete = [&](const fs::path& dir) {
      return std::all_of(files_.begin(), files_.end(), [&](const std::string& f) { return fs::is_regular_file(dir / f, ec); });
    };
    Found best{-1, ""};
    for (const auto& e : fs::directory_iterator(checkpoints, ec)) {
      const int64_t step = step_of(e.path().filename().string());
      if (step > best.step && complete(e.path())) best = {step, e.path().string()};
    }
    EMBER_CHECK(best.step >= 0, "resume", path_ << ": no complete checkpoint in " << checkpoints.string());
    return best;
  }
  EMBER_CHECK(fs::is_directory(run, ec), "resume", path_ << ": not a directory");
  return {0, path_};
}

}  // namespace ember::train
