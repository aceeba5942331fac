#include "base/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "base/faults.h"

namespace ember {

namespace {

// Writes all bytes or throws; honours the injected faults (base/faults.h).
void write_all(int fd, const char* p, size_t n, int64_t& written, const std::string& path, const char* op) {
  while (n > 0) {
    const size_t chunk = testing::allowed_write(written, n);
    if (chunk == 0) EMBER_FAIL(op, path << ": write failed (injected failure after " << written << " bytes)");
    testing::fs_step();
    ssize_t k = ::write(fd, p, chunk);
    if (k < 0 && errno == EINTR) continue;
    EMBER_CHECK(k > 0, op, path << ": write failed: " << std::strerror(errno));
    p += k;
    n -= static_cast<size_t>(k);
    written += k;
  }
}

void fsync_dir(const std::filesystem::path& dir) {
  testing::fs_step();
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

void fsync_directory(const std::string& dir) { fsync_dir(dir); }

RegularFile::~RegularFile() {
  if (fd >= 0) ::close(fd);
}

void open_regular_file(const std::string& path, const char* op, int64_t max_bytes, RegularFile& out) {
  // O_NONBLOCK: opening a FIFO with no writer must not hang; cleared below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  EMBER_CHECK(fd >= 0, op, path << ": cannot open the file: " << std::strerror(errno));
  out.fd = fd;
  struct stat st {};
  EMBER_CHECK(::fstat(fd, &st) == 0, op, path << ": cannot stat the file: " << std::strerror(errno));
  const char* kind = S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" :
                     S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : S_ISSOCK(st.st_mode) ? "a socket" : nullptr;
  EMBER_CHECK(S_ISREG(st.st_mode), op, path << ": not a regular file (" << (kind ? kind : "not a file") << ")");
  EMBER_CHECK(st.st_size <= max_bytes, op,
              path << ": the file is " << st.st_size << " bytes, more than the limit of " << max_bytes);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  out.size = st.st_size;
}

void read_exactly(RegularFile& f, int64_t n, std::string& out, const std::string& path, const char* op) {
  const size_t start = out.size();
  out.resize(start + static_cast<size_t>(n));
  int64_t got = 0;
  while (got < n) {
    const ssize_t k = ::read(f.fd, out.data() + start + got, static_cast<size_t>(n - got));
    if (k < 0 && errno == EINTR) continue;
    EMBER_CHECK(k >= 0, op, path << ": read error: " << std::strerror(errno));
    EMBER_CHECK(k > 0, op, path << ": the file ended after " << got << " of " << n << " bytes (did it shrink?)");
    got += k;
  }
}

void replace_symlink_atomically(const std::string& target, const std::string& link, const char* op) {
  const std::filesystem::path l(link);
  const std::string dir = l.parent_path().empty() ? std::string(".") : l.parent_path().string();
  // A fresh name next to the link, then renamed over it.
  std::string tmp;
  for (int attempt = 0;; ++attempt) {
    tmp = dir + "/." + l.filename().string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(attempt);
    testing::fs_step();
    if (::symlink(target.c_str(), tmp.c_str()) == 0) break;
    EMBER_CHECK(errno == EEXIST && attempt < 100, op,
                link << ": cannot create a symbolic link in " << dir << ": " << std::strerror(errno));
  }
  testing::fs_step();
  if (::rename(tmp.c_str(), link.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    EMBER_FAIL(op, link << ": rename failed: " << std::strerror(err));
  }
  fsync_dir(dir);
}

void write_file_atomically(const std::string& path, const std::vector<std::string_view>& pieces, const char* op) {
  std::filesystem::path target(path);
  std::filesystem::path dir = target.parent_path();
  const std::string dir_name = dir.empty() ? std::string(".") : dir.string();
  std::string tmpl = dir_name + "/." + target.filename().string() + ".tmp.XXXXXX";
  std::vector<char> tmp_name(tmpl.begin(), tmpl.end());
  tmp_name.push_back('\0');
  testing::fs_step();
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
    testing::fs_step();
    EMBER_CHECK(::fsync(fd) == 0, op, path << ": fsync failed: " << std::strerror(errno));
    EMBER_CHECK(::close(fd) == 0, op, path << ": close failed: " << std::strerror(errno));
    fd = -1;
    testing::fs_step();
    EMBER_CHECK(::rename(tmp.c_str(), path.c_str()) == 0, op, path << ": rename failed: " << std::strerror(errno));
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  fsync_dir(dir);
}

}  // namespace ember
