/// @file
/// Files written so that a crash, a full disk or a failed write never leaves
/// a half-written file where a good one was: the bytes go to a temporary file
/// in the same directory, which is flushed to disk and then renamed over the
/// target (rename is atomic within a file system), and the directory entry is
/// flushed too. Checkpoints and pictures are written this way. (The tests'
/// fault injection into these steps is base/faults.h.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

/// Writes the pieces, one after another, to path atomically. On any failure
/// the previous file at path is untouched, the temporary is removed, and an
/// ember::Error names op, the path and the reason.
void write_file_atomically(const std::string& path, const std::vector<std::string_view>& pieces, const char* op);

/// Opens path for reading only if it is a regular file (a directory, FIFO,
/// device or socket is an ember::Error naming op and the path; opening never
/// blocks), at most max_bytes long. Returns the descriptor and the size.
struct RegularFile {
  int fd = -1;
  int64_t size = 0;
  RegularFile() = default;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();
};
void open_regular_file(const std::string& path, const char* op, int64_t max_bytes, RegularFile& out);
/// Reads exactly n bytes at the file's current position into out (appended).
void read_exactly(RegularFile& f, int64_t n, std::string& out, const std::string& path, const char* op);

/// Makes `link` a symbolic link to `target` (a path relative to link's
/// directory), replacing whatever was there in one atomic rename: a reader
/// sees the old link or the new one, never none.
void replace_symlink_atomically(const std::string& target, const std::string& link, const char* op);

/// Flushes a directory's entries (a rename or a new file in it) to disk.
void fsync_directory(const std::string& dir);

}  // namespace ember
