#include "tensor/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tensor/error.h"

namespace ember {

namespace {

int64_t g_fail_after = -1;  // testing hook

// Writes all bytes or throws; honours the testing hook.
void write_all(int fd, const char* p, size_t n, int64_t& written, const std::string& path, const char* op) {
  while (n > 0) {
    size_t chunk = n;
    if (g_fail_after >= 0) {
      if (written >= g_fail_after) {
        g_fail_after = -1;
        EMBER_FAIL(op, path << ": write failed (injected failure after " << written << " bytes)");
      }
      chunk = std::min<size_t>(chunk, static_cast<size_t>(g_fail_after - written));
    }
    ssize_t k = ::write(fd, p, chunk);
    if (k < 0 && errno == EINTR) continue;
    EMBER_CHECK(k > 0, op, path << ": write failed: " << std::strerror(errno));
    p += k;
    n -= static_cast<size_t>(k);
    written += k;
  }
}

void fsync_dir(const std::filesystem::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

namespace testing {
void fail_next_write_after(int64_t bytes) { g_fail_after = bytes; }
}  // namespace testing

void write_file_atomically(const std::string& path, const std::vector<std::string_view>& pieces, const char* op) {
  std::filesystem::path target(path);
  std::filesystem::path dir = target.parent_path();
  const std::string dir_name = dir.empty() ? std::string(".") : dir.string();
  std::string tmpl = dir_name + "/." + target.filename().string() + ".tmp.XXXXXX";
  std::vector<char> tmp_name(tmpl.begin(), tmpl.end());
  tmp_name.push_back('\0');
  int fd = ::mkstemp(tmp_name.data());
  EMBER_CHECK(fd >= 0, op, path << ": cannot create a temporary file in " << dir_name << ": " << std::strerror(errno));
  std::string tmp(tmp_name.data());
  try {
    // mkstemp creates the file 0600; the result gets the usual 0666 & ~umask.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    EMBER_CHECK(::fchmod(fd, 0666 & ~mask) == 0, op, path << ": chmod failed: " << std::strerror(errno));
    int64_t written = 0;
    for (std::string_view piece : pieces) write_all(fd, piece.data(), piece.size(), written, path, op);
    EMBER_CHECK(::fsync(fd) == 0, op, path << ": fsync failed: " << std::strerror(errno));
    EMBER_CHECK(::close(fd) == 0, op, path << ": close failed: " << std::strerror(errno));
    fd = -1;
    EMBER_CHECK(::rename(tmp.c_str(), path.c_str()) == 0, op, path << ": rename failed: " << std::strerror(errno));
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  fsync_dir(dir);
}

}  // namespace ember
