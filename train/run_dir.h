/// @file
/// A run directory that a crash cannot spoil: checkpoints are saved so that
/// whatever instant the process dies at, the directory holds the previous
/// complete checkpoint or the new one, never a mix of the two, and the newest
/// complete one is found without reading a byte of it.
///
///   run/checkpoints/step-00000200/FILE...   a checkpoint: every one of its files
///   run/latest -> checkpoints/step-00000200  the newest (replaced in one rename)
///   run/FILE -> latest/FILE                  a stable name for each file
///
/// save(step) goes in five steps:
///   1. remove what killed saves left behind (remove_leftovers)
///   2. write every file into a hidden staging directory,
///      checkpoints/.step-00000200.PID, and flush it
///   3. rename it to checkpoints/step-00000200: the checkpoint appears
///      complete, in one atomic step
///   4. point `latest` at it (one rename), and each stable name through `latest`
///   5. remove every other step directory
/// Killed before 3, the run has the previous checkpoint (and a staging
/// directory, which the next save removes). Killed after it, latest() finds
/// the new one; `latest` and the stable names still show the previous one
/// until 4, which is there beside it until 5. Each is complete either way.
///
/// The protocol deals in plain files: it knows the names of a checkpoint's
/// files, not what they hold (train/trainer.h saves a GPT run through it).
///
/// One process at a time writes a run directory: lock() holds it (a flock on
/// run/.lock, which the kernel releases when the holder dies, however it
/// dies), and every save holds it while it runs. A second process is refused
/// at once, with the holder's pid.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ember::train {

/// This process's hold on a run directory (RunDir::lock), until destroyed.
class RunLock {
 public:
  RunLock() = default;  // holds nothing
  RunLock(RunLock&& other) noexcept : key_(std::move(other.key_)) { other.key_.clear(); }
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock() { release(); }
  bool held() const { return !key_.empty(); }
  void release();

 private:
  friend class RunDir;
  explicit RunLock(std::string key) : key_(std::move(key)) {}
  std::string key_;  // the directory, as the process's table of held locks knows it
};

class RunDir {
 public:
  /// The run directory at `path`, whose checkpoints hold the files `files`
  /// (plain names: non-empty, distinct, without '/' and not starting with '.').
  RunDir(std::string path, std::vector<std::string> files);

  /// Writes one checkpoint's files into the directory it is given. It must
  /// write each of files() there durably (write_file_atomically does) or throw.
  using WriteFiles = std::function<void(const std::string& dir)>;
  /// Saves a checkpoint as step `step` (>= 0) in the five steps above,
  /// holding the directory (lock()) meanwhile. A step that is already saved
  /// is kept as it is (write is not called): whether it is the same run's is
  /// the caller's to know (Trainer::save checks). If write throws, or leaves
  /// out a file, the staging directory is removed and the run is as it was
  /// before (an ember::Error, op "save").
  void save(int64_t step, const WriteFiles& write) const;

  /// A complete checkpoint: its step and its directory.
  struct Found {
    int64_t step = 0;
    std::string dir;
    std::string file(const std::string& name) const;  // dir/name
  };
  /// The newest complete checkpoint: the highest step directory under
  /// checkpoints/ that holds every file. A directory saved before step
  /// directories existed (no checkpoints/) has its files side by side: then
  /// the run directory itself, as step 0 (the files say which step they are).
  /// An ember::Error (op "resume") naming the path when there is none.
  Found latest() const;
  /// The same, or nothing when there is none.
  std::optional<Found> newest() const;

  /// Holds the directory (made if missing) for this process until the
  /// RunLock is destroyed. Held by another process: an ember::Error (op
  /// "lock") at once, naming that process's pid and program, which run/.lock
  /// records. This process may hold it more than once (save() does, inside a
  /// program's hold); a child made by fork() shares its parent's hold.
  /// `op` names the failure in its message (save() passes "save").
  RunLock lock(const char* op = "lock") const;

  /// The names in the directory that belong to a run: checkpoints/ when it
  /// holds a complete checkpoint, latest, each file's stable name, and each
  /// of `outputs` (files a program writes beside the checkpoints, e.g.
  /// loss.csv) that exists. Empty: no run is here (a new directory, other
  /// files only, or only what a killed first save left).
  std::vector<std::string> run_files(const std::vector<std::string>& outputs = {}) const;
  /// Removes what run_files names, and the leftovers, so that a new run can
  /// start here; other files stay. Holds the directory while it runs.
  void remove_run(const std::vector<std::string>& outputs = {}) const;

  /// Removes what killed saves leave: staging directories (".step-*") under
  /// checkpoints/, and the temporaries of atomic writes and links
  /// (".NAME.tmp.*") in the run directory. Best effort: what cannot be
  /// removed now is tried again at the next save.
  void remove_leftovers() const;

  /// "step-00000200": a checkpoint's directory name (at least 8 digits).
  static std::string step_name(int64_t step);
  /// The step a directory name stands for: "step-" and 1 to 18 digits
  /// ("step-00000200" -> 200). Anything else (a staging directory, "step-",
  /// "step-12a", "step--1", more digits than int64 holds) -> -1.
  static int64_t step_of(const std::string& name);

  const std::string& path() const { return path_; }
  const std::vector<std::string>& files() const { return files_; }

 private:
  void write_step(int64_t step, const WriteFiles& write) const;  // steps 2 and 3
  void point_latest_at(int64_t step) const;                      // step 4

  std::string path_;
  std::vector<std::string> files_;
};

}  // namespace ember::train
