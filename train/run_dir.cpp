#include "train/run_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "base/error.h"
#include "base/faults.h"
#include "base/io.h"

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

// The run directories this process holds: one open, flock()ed lock file
// each, shared by nested holds. (A child made by fork() inherits the open
// file and this table: it holds what its parent held.)
struct Held {
  int fd;
  int count;
};
std::mutex held_mutex;
std::map<std::string, Held>& held_locks() {
  static std::map<std::string, Held> table;
  return table;
}

// "PID PROGRAM\n": a positive number, a space, a name without spaces, a newline.
bool is_lock_record(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i > 19 || i >= s.size() || s[i] != ' ') return false;
  const size_t name = ++i;
  while (i < s.size() && s[i] != '\n' && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i > name && i + 1 == s.size() && s[i] == '\n';
}

[[noreturn]] void refuse_lock_file(const std::string& file, const std::string& why, const char* op) {
  EMBER_FAIL(op, file << " is not a lock file ember wrote (" << why << "): it is left as it is; remove it if the "
                         "directory is a run of yours");
}

// Opens (creating it if need be) the run's lock file, refusing anything but
// a regular file of its own, in the way of every file of the run directory:
// a symbolic link (which would make the run write its pid into the link's
// target), a hard link to another file, a FIFO, a directory; and, once it is
// locked, a file whose bytes are not a lock record (check_lock_record).
int open_lock_file(const std::string& file, const char* op) {
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    std::error_code ec;
    EMBER_CHECK(!(err == ELOOP || fs::is_symlink(fs::symlink_status(file, ec))), op,
                file << " is a symbolic link: the lock file of a run directory is a regular file ember makes; "
                        "remove the link");
    EMBER_FAIL(op, file << ": cannot open the lock file: " << std::strerror(err));
  }
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) why = std::string("cannot stat it: ") + std::strerror(errno);
  else if (!S_ISREG(st.st_mode)) why = "it is not a regular file";
  else if (st.st_nlink != 1) why = "it has " + std::to_string(st.st_nlink) + " names (a hard link to another file)";
  if (!why.empty()) {
    ::close(fd);
    refuse_lock_file(file, why, op);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// Once the lock is held (no other process writes the file now): what the
// file holds must be empty or a lock record, before lock() rewrites it.
void check_lock_record(int fd, const std::string& file, const char* op) {
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) why = std::string("cannot stat it: ") + std::strerror(errno);
  else if (st.st_size > 256) why = "it holds " + std::to_string(st.st_size) + " bytes, not a lock record";
  if (why.empty() && st.st_size > 0) {
    std::string bytes(static_cast<size_t>(st.st_size), '\0');
    const ssize_t got = ::pread(fd, bytes.data(), bytes.size(), 0);
    if (got != st.st_size || !is_lock_record(bytes)) why = "its bytes are not a lock record (\"PID PROGRAM\")";
  }
  if (!why.empty()) {
    ::close(fd);
    refuse_lock_file(file, why, op);
  }
}

// "process 12345 (train_gpt)", from the lock file the holder wrote.
std::string holder(const std::string& lock_file) {
  std::ifstream f(lock_file);
  long long pid = 0;
  std::string program;
  if (!(f >> pid >> program) || pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH))
    return "another process";
  return "process " + std::to_string(pid) + " (" + program + ")";
}
}  // namespace

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    release();
    key_ = std::move(other.key_);
    other.key_.clear();
  }
  return *this;
}

void RunLock::release() {
  if (key_.empty()) return;
  std::lock_guard<std::mutex> guard(held_mutex);
  auto it = held_locks().find(key_);
  if (it != held_locks().end() && --it->second.count == 0) {
    ::close(it->second.fd);  // the kernel drops the flock with the last descriptor
    held_locks().erase(it);
  }
  key_.clear();
}

RunLock RunDir::lock(const char* op) const {
  std::error_code ec;
  fs::create_directories(path_, ec);
  EMBER_CHECK(!ec && fs::is_directory(path_, ec), op, path_ << ": cannot create the directory" << (ec ? ": " + ec.message() : ""));
  const std::string key = fs::canonical(path_, ec).string();
  EMBER_CHECK(!ec, op, path_ << ": " << ec.message());
  std::lock_guard<std::mutex> guard(held_mutex);
  if (auto it = held_locks().find(key); it != held_locks().end()) {
    ++it->second.count;
    return RunLock(key);
  }
  const std::string file = (fs::path(path_) / ".lock").string();
  const int fd = open_lock_file(file, op);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    EMBER_CHECK(err != EWOULDBLOCK, op,
                path_ << " is in use by " << holder(file)
                      << ": one process at a time writes a run directory; wait for it to end, or use another directory");
    EMBER_FAIL(op, file << ": flock failed: " << std::strerror(err));
  }
  // The lock is the file's inode: if .lock was removed or replaced while this
  // process waited for it, another process may hold the new one.
  struct stat held {}, now {};
  if (::fstat(fd, &held) != 0 || ::lstat(file.c_str(), &now) != 0 || held.st_ino != now.st_ino ||
      held.st_dev != now.st_dev) {
    ::close(fd);
    EMBER_FAIL(op, file << " was replaced while it was being locked: another process is starting on " << path_
                        << "; try again");
  }
  check_lock_record(fd, file, op);
  // Who holds it, for the message a second process gets (best effort: the
  // lock itself is the flock, not these bytes).
  std::string program = program_invocation_short_name;
  std::replace_if(program.begin(), program.end(), [](unsigned char c) { return std::isspace(c) != 0; }, '_');
  if (program.empty()) program = "ember";
  const std::string me = std::to_string(::getpid()) + " " + program + "\n";
  if (::ftruncate(fd, 0) == 0 && ::pwrite(fd, me.data(), me.size(), 0) < 0) {
  }
  held_locks()[key] = {fd, 1};
  return RunLock(key);
}

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
  const RunLock hold = lock("save");
  // A later checkpoint than this one would be removed below: that is another
  // run's future, never this save's to throw away.
  if (const std::optional<Found> found = newest())
    EMBER_CHECK(found->step <= step, "save",
                path_ << " holds a checkpoint at step " << found->step << ", later than step " << step
                      << " being saved: resume that run, or save into another directory");
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

std::optional<RunDir::Found> RunDir::newest() const {
  const fs::path run(path_), checkpoints = run / "checkpoints";
  std::error_code ec;
  auto complete = [&](const fs::path& dir) {
    return std::all_of(files_.begin(), files_.end(), [&](const std::string& f) { return fs::is_regular_file(dir / f, ec); });
  };
  if (fs::is_directory(checkpoints, ec)) {
    Found best{-1, ""};
    for (const auto& e : fs::directory_iterator(checkpoints, ec)) {
      const int64_t step = step_of(e.path().filename().string());
      if (step > best.step && complete(e.path())) best = {step, e.path().string()};
    }
    if (best.step >= 0) return best;
  }
  // The layout before checkpoints/ (or a checkpoints/ with no complete step
  // yet): the files at the top of the run directory.
  if (fs::is_directory(run, ec) && complete(run)) return Found{0, path_};
  return std::nullopt;
}

RunDir::Found RunDir::latest() const {
  if (std::optional<Found> found = newest()) return *found;
  const fs::path run(path_), checkpoints = run / "checkpoints";
  std::error_code ec;
  EMBER_CHECK(fs::is_directory(run, ec), "resume", path_ << ": not a directory");
  EMBER_CHECK(!fs::is_directory(checkpoints, ec), "resume", path_ << ": no complete checkpoint in " << checkpoints.string());
  // The layout before step directories, with a file missing: reading it
  // names the file.
  return {0, path_};
}

std::vector<std::string> RunDir::run_files(const std::vector<std::string>& outputs) const {
  std::vector<std::string> out;
  std::error_code ec;
  if (newest() && fs::is_directory(fs::path(path_) / "checkpoints", ec)) out.push_back("checkpoints");
  std::vector<std::string> names{"latest"};
  names.insert(names.end(), files_.begin(), files_.end());
  names.insert(names.end(), outputs.begin(), outputs.end());
  for (const std::string& n : names)
    if (fs::exists(fs::symlink_status(fs::path(path_) / n, ec))) out.push_back(n);
  return out;
}

void RunDir::remove_run(const std::vector<std::string>& outputs) const {
  const RunLock hold = lock();
  // The names first, the checkpoints last: killed in between, the directory
  // still holds a checkpoint that resumes, or names that the next removal
  // finds again.
  std::vector<std::string> names = run_files(outputs);
  std::stable_partition(names.begin(), names.end(), [](const std::string& n) { return n != "checkpoints"; });
  for (const std::string& n : names) remove_tree(fs::path(path_) / n);
  remove_tree(fs::path(path_) / "checkpoints");  // staging directories too
  remove_leftovers();
  fsync_directory(path_);
}

}  // namespace ember::train
