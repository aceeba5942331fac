/// @file
/// Files written so that a crash, a full disk or a failed write never leaves
/// a half-written file where a good one was: the bytes go to a temporary file
/// in the same directory, which is flushed to disk and then renamed over the
/// target (rename is atomic within a file system), and the directory entry is
/// flushed too. Checkpoints and pictures are written this way.
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

namespace testing {
/// Makes the next write_file_atomically fail after `bytes` bytes (-1: never),
/// to test that a failed save leaves the previous file intact.
void fail_next_write_after(int64_t bytes);
}  // namespace testing

}  // namespace ember
