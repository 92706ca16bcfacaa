// Runs the profiled program as a child of the launcher. Launcher process only (single-threaded:
// the child may allocate between fork and exec).
//
// Two-phase start so that %p in the output template can be the program's own pid: Start() forks a
// child that waits on a pipe; the launcher then creates the output directory and writes the
// manifest; Release() hands the child its last environment entries and lets it exec. While the
// child runs, SIGINT, SIGTERM and SIGHUP sent to the launcher are forwarded to it (except
// terminal-generated ones, which the child, being in the same foreground process group, already
// got). Signals the launcher inherited as ignored stay ignored for the child.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gprof::launcher {

// PATH lookup as execvp does it. Returns "" and sets `path`, or returns the problem and sets
// `exit_code` (127 not found, 126 found but not executable).
std::string ResolveProgram(const std::string& name, const std::string& path_env,
                           std::string* path, int* exit_code);

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  // Forks; the child waits for Release() or Abort(). `env` is the child's environment except the
  // entries Release() adds. Returns "" or what failed.
  std::string Start(const std::string& exe_path, const std::vector<std::string>& argv,
                    const std::vector<std::string>& env);
  pid_t pid() const { return pid_; }

  // Lets the child exec with `extra_env` ("KEY=value") appended. Returns "" once exec succeeded,
  // otherwise the exec error (the child has then exited 126 or 127; Wait() returns that).
  std::string Release(const std::vector<std::string>& extra_env);
  // The child exits without running the program.
  void Abort();

  // Waits for the child, forwarding signals. Returns its exit status, or 128+N for signal N.
  int Wait();

 private:
  pid_t pid_ = -1;
  int go_fd_ = -1;    // write end: parent -> child "go" message
  int err_fd_ = -1;   // read end: child -> parent exec errno (CLOEXEC: EOF means exec worked)
};

}  // namespace gprof::launcher
