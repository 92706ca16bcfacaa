// Runs a real process for process-level tests: argv, extra environment, a timeout; captures exit
// status, stdout and stderr (a process killed at the timeout gets its threads' states, from
// /proc, appended to its stderr, for the failure message). Test-only.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace gprof::testing {

struct ProcessResult {
  int exit_code = -1;     // valid when !signaled
  int term_signal = 0;    // valid when signaled
  bool signaled = false;
  bool timed_out = false;
  std::string out;
  std::string err;
};

struct ProcessOptions {
  std::map<std::string, std::string> set_env;  // added to (or replacing in) the current env
  std::vector<std::string> unset_env;
  std::string cwd;                              // "" = inherit
  std::chrono::milliseconds timeout{60000};
  // If >0: send `signal_after_signal` this long after start (for signal forwarding tests).
  std::chrono::milliseconds signal_after{0};
  int signal_to_send = 0;
  // If not empty: send `signal_to_send` as soon as stdout contains this text (instead of a time).
  std::string signal_when_out_has;
  std::string stdin_data;
};

ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Paths into the build tree (GPROF_BINARY_DIR is set by gprof_add_test).
std::string BinaryDir();
std::string SourceDir();
std::string LauncherPath();   // build/bin/gprof-run
std::string StandInLibDir();  // build/tests/cudasim/lib
std::string PythonPath();     // the python with the `nvtx` package (see scripts/setup)

// A fresh empty directory under the build tree for one test's outputs.
std::string MakeTempDir(const std::string& tag);
std::string ReadFile(const std::string& path);
std::vector<std::string> ListDir(const std::string& dir);

}  // namespace gprof::testing
