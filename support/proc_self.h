// What this process can read about itself, and path pieces: the command line and executable from
// /proc/self, and basename/dirname without allocation surprises. Shared by the collector's
// process identity (dump names) and its libcupti search (the interpreter's prefix). Cold code.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace gprof {

// argv as the kernel recorded it (/proc/self/cmdline); empty when unreadable.
inline std::vector<std::string> ReadSelfCmdline() {
  std::vector<std::string> args;
  FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (f == nullptr) return args;
  std::string arg;
  bool any = false;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) {
    any = true;
    if (c == '\0') {
      args.push_back(arg);
      arg.clear();
    } else {
      arg.push_back(static_cast<char>(c));
    }
  }
  if (any && !arg.empty()) args.push_back(arg);
  std::fclose(f);
  return args;
}

// The executable's resolved path (/proc/self/exe; a venv's python resolves to the system one).
inline std::string ReadSelfExe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// "a/b/c" -> "c"; "c" -> "c".
inline std::string PathBasename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "a/b/c" -> "a/b"; "/c" -> "/"; "c" -> ".".
inline std::string PathDirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace gprof
