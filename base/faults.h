/// @file
/// Fault injection, for the tests of crash consistency: a write that fails
/// part way, and a SIGKILL at a chosen step of a save. Every file-system step
/// of saving (each write, fsync, rename, symlink, directory made or removed)
/// calls fs_step() first: base/io.cpp for the atomic files and links, and
/// the run directory of train/ for its own steps. Unarmed, each hook is a
/// comparison with -1.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember::testing {

/// Makes the next atomic file write fail after `bytes` bytes (-1: never), to
/// test that a failed save leaves the previous file intact.
void fail_next_write_after(int64_t bytes);
/// How many of the `wanted` bytes the next write may write, `written` bytes
/// into the file; 0 means the armed failure happens now (and disarms it).
size_t allowed_write(int64_t written, size_t wanted);

/// Counts the file-system steps of saving and kills the process with SIGKILL
/// just before step number `step` (counting from 0; -1: never), to test that
/// a crash at any instant of a save leaves something to resume from.
void kill_at_fs_step(int64_t step);
/// The steps counted so far.
int64_t fs_steps();
/// Called before each such step.
void fs_step();

}  // namespace ember::testing
