// Output files, written so that nobody else can steer them: every file gprof-run writes (dumps,
// fork markers, tables, traces, manifests, merged views) goes through here.
//
// The rules (docs/RELIABILITY.md, "Output paths"):
//   - The output directory is reached one component at a time (openat), never by handing a
//     whole path to the kernel. A symbolic link on the way is followed only when it belongs to
//     this user or to root; one owned by anybody else (planted in a shared directory such as
//     /tmp) is refused. Its target is walked by the same rules.
//   - The directory itself must belong to this user, or be a root-owned sticky directory (/tmp,
//     /var/tmp, /dev/shm), where the kernel protects each user's files from the others.
//   - A file is created under a fresh temporary name with O_CREAT|O_EXCL|O_NOFOLLOW (never
//     opening something that already exists, link or not) and renamed over its final name when
//     complete: a reader sees the whole file or none, and a link at the final name is replaced,
//     never written through.
// Missing directories are created (0755, less the umask) when asked: a directory removed while
// the program runs is made again at the next write.
//
// Where this runs: in the profiled program (the collector's flush and window writes, and
// OpenOutputDirAt in a fork child, which is async-signal-safe: fixed buffers, syscalls only) and
// in the launcher. Writes go through write(2), not stdio, so a test can interpose it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gprof {

// Why OpenOutputDirAt refused or failed.
struct OutputDirError {
  enum Kind { kNone, kSystem, kTooLong, kLinkLoop, kForeignLink, kForeignDir, kNotDir };
  Kind kind = kNone;
  int err = 0;          // errno, for kSystem
  unsigned uid = 0;     // the owner, for kForeignLink and kForeignDir
  char where[256] = {};  // the component (or directory) concerned, truncated
};

// Opens directory `path` (relative to the working directory unless absolute) by the rules above,
// creating missing components when `create`. Returns an O_DIRECTORY fd (close it), or -1 with
// `*error` set. Async-signal-safe.
int OpenOutputDirAt(const char* path, bool create, OutputDirError* error);

// One line for `error` about `path`, saying what to do.
std::string DescribeOutputDirError(const std::string& path, const OutputDirError& error);

// Opens `dir` by the rules above; "" and `*fd` on success, else the message.
std::string OpenOutputDir(const std::string& dir, bool create, int* fd);

// A file written under a temporary name in its directory and renamed into place by Commit.
// Destroying it uncommitted removes the temporary file.
class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Starts `path`; creates its directory when `create_dirs`. "" on success, else the message.
  std::string Open(const std::string& path, bool create_dirs);
  // Buffers and writes `n` bytes; after the first failure every call returns false.
  bool Write(const void* data, size_t n);
  bool Write(std::string_view s) { return Write(s.data(), s.size()); }
  // Writes what is buffered to the temporary file, which stays open: a file written in parts
  // (a dump's segments) keeps each completed part if the process dies. "" on success, else the
  // message.
  std::string Flush();
  // Writes what is buffered and closes the temporary file (kept until Commit or destruction).
  // "" on success, else the message (naming the file and errno text, e.g. "No space left on
  // device"). For a set of files that should appear together: Close each, then Commit each.
  std::string Close();
  // Closes (if still open) and renames into place. "" on success, else the message.
  std::string Commit();
  // Closes and removes the temporary file (what the destructor does); nothing more is written.
  void Discard();
  const std::string& path() const { return path_; }
  // The temporary file's path, for a writer that must open it by name (SQLite): write nothing
  // through Write then, only Commit. The directory was vetted by Open; in it nobody else can
  // replace the file (it is this user's, or root's sticky one).
  std::string temp_path() const;

 private:
  bool Drain();

  std::string path_, name_, tmp_name_;
  int dir_fd_ = -1, fd_ = -1;
  int error_ = 0;  // errno of the first failed write
  std::vector<char> buffer_;
  size_t used_ = 0;
};

// Writes `bytes` as the whole of `path` (OutputFile). "" on success, else the message.
std::string WriteOutputFile(const std::string& path, std::string_view bytes, bool create_dirs);

}  // namespace gprof
