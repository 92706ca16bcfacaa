// Safe output paths and atomically written files (see output_file.h).
#include "model/output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gprof {
namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit on links followed in one lookup
constexpr size_t kBufferSize = 1 << 20;

int Fail(OutputDirError* error, OutputDirError::Kind kind, int fd, const char* where,
         int err = 0, unsigned uid = 0) {
  if (fd >= 0) ::close(fd);
  error->kind = kind;
  error->err = err;
  error->uid = uid;
  size_t n = 0;
  while (where[n] != '\0' && n + 1 < sizeof error->where) {
    error->where[n] = where[n];
    ++n;
  }
  error->where[n] = '\0';
  return -1;
}

int OpenRoot(bool absolute) {
  return ::open(absolute ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

// A link or directory this user may rely on: its own, or root's.
bool Trusted(uid_t owner, uid_t me) { return owner == me || owner == 0; }

}  // namespace

int OpenOutputDirAt(const char* path, bool create, OutputDirError* error) {
  *error = OutputDirError{};
  // `rest` holds what is still to walk; a followed link's target is spliced in front of it.
  char rest[2 * PATH_MAX];
  const size_t length = std::strlen(path);
  if (length == 0 || length >= PATH_MAX) return Fail(error, OutputDirError::kTooLong, -1, path);
  std::memcpy(rest, path, length + 1);
  const uid_t me = ::geteuid();
  int dir = OpenRoot(rest[0] == '/');
  if (dir < 0) return Fail(error, OutputDirError::kSystem, -1, path, errno);
  size_t pos = 0;
  int links = 0;
  for (;;) {
    while (rest[pos] == '/') ++pos;
    if (rest[pos] == '\0') break;
    size_t end = pos;
    while (rest[end] != '\0' && rest[end] != '/') ++end;
    char name[NAME_MAX + 1];
    if (end - pos > NAME_MAX) return Fail(error, OutputDirError::kSystem, dir, path, ENAMETOOLONG);
    std::memcpy(name, rest + pos, end - pos);
    name[end - pos] = '\0';
    pos = end;
    if (std::strcmp(name, ".") == 0) continue;

    struct stat st;
    if (::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT || !create) return Fail(error, OutputDirError::kSystem, dir, name, errno);
      if (::mkdirat(dir, name, 0755) != 0 && errno != EEXIST) {
        return Fail(error, OutputDirError::kSystem, dir, name, errno);
      }
      if (::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return Fail(error, OutputDirError::kSystem, dir, name, errno);
      }
    }
    if (S_ISLNK(st.st_mode)) {
      if (!Trusted(st.st_uid, me)) {
        return Fail(error, OutputDirError::kForeignLink, dir, name, 0, st.st_uid);
      }
      if (++links > kMaxLinks) return Fail(error, OutputDirError::kLinkLoop, dir, name);
      char target[PATH_MAX];
      const ssize_t n = ::readlinkat(dir, name, target, sizeof target - 1);
      if (n <= 0) return Fail(error, OutputDirError::kSystem, dir, name, n < 0 ? errno : ENOENT);
      const size_t remaining = std::strlen(rest + pos);
      const size_t tn = static_cast<size_t>(n);
      if (tn + 1 + remaining + 1 > sizeof rest) return Fail(error, OutputDirError::kTooLong, dir, path);
      std::memmove(rest + tn + 1, rest + pos, remaining + 1);
      std::memcpy(rest, target, tn);
      rest[tn] = '/';
      pos = 0;
      if (target[0] == '/') {
        ::close(dir);
        dir = OpenRoot(true);
        if (dir < 0) return Fail(error, OutputDirError::kSystem, -1, path, errno);
      }
      continue;
    }
    if (!S_ISDIR(st.st_mode)) return Fail(error, OutputDirError::kNotDir, dir, name);
    const int next = ::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return Fail(error, OutputDirError::kSystem, dir, name, errno);
    ::close(dir);
    dir = next;
  }
  struct stat st;
  if (::fstat(dir, &st) != 0) return Fail(error, OutputDirError::kSystem, dir, path, errno);
  const bool shared_sticky = st.st_uid == 0 && (st.st_mode & S_ISVTX) != 0;
  if (st.st_uid != me && !shared_sticky) {
    return Fail(error, OutputDirError::kForeignDir, dir, path, 0, st.st_uid);
  }
  return dir;
}

std::string DescribeOutputDirError(const std::string& path, const OutputDirError& e) {
  const std::string where = e.where;
  const std::string me = std::to_string(::geteuid());
  switch (e.kind) {
    case OutputDirError::kNone:
      return "";
    case OutputDirError::kSystem:
      return "cannot use the output directory " + path + ": " + where + ": " +
             std::strerror(e.err);
    case OutputDirError::kTooLong:
      return "the output directory " + path + " is too long a path";
    case OutputDirError::kLinkLoop:
      return "the output directory " + path + " goes through more than 40 symbolic links (" +
             where + ")";
    case OutputDirError::kForeignLink:
      return "refusing the output directory " + path + ": " + where +
             " is a symbolic link owned by uid " + std::to_string(e.uid) + ", not by you (uid " +
             me + ") or root; gprof-run never follows a link someone else may have planted. "
             "Choose a directory of your own";
    case OutputDirError::kForeignDir:
      return "refusing the output directory " + path + ": it belongs to uid " +
             std::to_string(e.uid) + ", not to you (uid " + me +
             "); gprof-run never writes into another user's directory. Choose one of your own";
    case OutputDirError::kNotDir:
      return "cannot use the output directory " + path + ": " + where + " is not a directory";
  }
  return "cannot use the output directory " + path;
}

std::string OpenOutputDir(const std::string& dir, bool create, int* fd) {
  OutputDirError error;
  *fd = OpenOutputDirAt(dir.c_str(), create, &error);
  return *fd < 0 ? DescribeOutputDirError(dir, error) : "";
}

OutputFile::~OutputFile() { Discard(); }

void OutputFile::Discard() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_name_.empty()) ::unlinkat(dir_fd_, tmp_name_.c_str(), 0);
  if (dir_fd_ >= 0) ::close(dir_fd_);
  fd_ = dir_fd_ = -1;
  tmp_name_.clear();
}

std::string OutputFile::Open(const std::string& path, bool create_dirs) {
  path_ = path;
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  name_ = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name_.empty() || name_ == "." || name_ == "..") return "not a file name: " + path;
  if (std::string e = OpenOutputDir(dir, create_dirs, &dir_fd_); !e.empty()) return e;
  const std::string stem = name_ + ".tmp." + std::to_string(::getpid());
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string candidate = attempt == 0 ? stem : stem + "." + std::to_string(attempt);
    fd_ = ::openat(dir_fd_, candidate.c_str(),
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ >= 0) {
      tmp_name_ = std::move(candidate);
      buffer_.resize(kBufferSize);
      return "";
    }
    if (errno != EEXIST) return "cannot create " + dir + "/" + candidate + ": " + std::strerror(errno);
  }
  return "cannot create a temporary file for " + path + ": 100 names taken";
}

std::string OutputFile::temp_path() const {
  const size_t slash = path_.find_last_of('/');
  return (slash == std::string::npos ? std::string() : path_.substr(0, slash + 1)) + tmp_name_;
}

bool OutputFile::Drain() {
  size_t done = 0;
  while (done < used_ && error_ == 0) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, used_ - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      error_ = n < 0 ? errno : EIO;
    }
  }
  used_ = 0;
  return error_ == 0;
}

bool OutputFile::Write(const void* data, size_t n) {
  if (fd_ < 0 || error_ != 0) return false;
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    if (used_ == buffer_.size() && !Drain()) return false;
    const size_t take = std::min(n, buffer_.size() - used_);
    std::memcpy(buffer_.data() + used_, p, take);
    used_ += take;
    p += take;
    n -= take;
  }
  return true;
}

std::string OutputFile::Flush() {
  if (fd_ < 0 && error_ == 0) error_ = EBADF;
  if (fd_ >= 0) Drain();
  if (error_ != 0) {
    return "cannot write " + path_ + " (as " + tmp_name_ + "): " + std::strerror(error_);
  }
  return "";
}

std::string OutputFile::Close() {
  if (fd_ >= 0) {
    Drain();
    if (::close(fd_) != 0 && error_ == 0) error_ = errno;
    fd_ = -1;
  } else if (tmp_name_.empty() && error_ == 0) {
    error_ = EBADF;  // never opened, or already committed
  }
  if (error_ != 0) {
    return "cannot write " + path_ + " (as " + tmp_name_ + "): " + std::strerror(error_);
  }
  return "";
}

std::string OutputFile::Commit() {
  if (std::string e = Close(); !e.empty()) return e;
  const std::string tmp_path = path_ + " (as " + tmp_name_ + ")";
  if (::renameat(dir_fd_, tmp_name_.c_str(), dir_fd_, name_.c_str()) != 0) {
    return "cannot rename " + tmp_path + " into place: " + std::strerror(errno);
  }
  tmp_name_.clear();
  return "";
}

std::string WriteOutputFile(const std::string& path, std::string_view bytes, bool create_dirs) {
  OutputFile file;
  if (std::string e = file.Open(path, create_dirs); !e.empty()) return e;
  file.Write(bytes);
  return file.Commit();
}

}  // namespace gprof
