// A progress line on stderr while gprof-run post-processes dumps (tables, traces, findings, the
// HTML report): silent for the first second, which is all most profiles take; then what it is
// doing and for how long. On a terminal one line rewritten in place a few times a second and
// erased at the end; elsewhere (a log file, CI) one plain line per stage, no control characters.
// Launcher process only; owns one thread while a stage is running.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace gprof::launcher {

class Progress {
 public:
  // `terminal`: rewrite one line in place (true when `out` is a tty, see ForStream).
  Progress(std::FILE* out, bool terminal,
           std::chrono::milliseconds delay = std::chrono::milliseconds(1000),
           std::chrono::milliseconds period = std::chrono::milliseconds(250));
  // For `out`: a terminal when isatty(fileno(out)).
  static bool IsTerminal(std::FILE* out);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Now doing `what` ("train.1234.gpdump: trace.json").
  void Stage(const std::string& what);
  // Prints `message` (a whole line, with its newline) on `out` without mixing it into the
  // progress line, which goes on below it.
  void Print(const std::string& message);
  // Ends the line (erased on a terminal); before anything else is printed to `out`.
  void Done();

 private:
  void Run();
  void PrintLocked();

  std::FILE* out_;
  const bool terminal_;
  const std::chrono::milliseconds delay_, period_;
  const std::chrono::steady_clock::time_point start_;
  // Guards everything below; the worker prints with it held, so Stage and Done never interleave
  // with a line being written.
  std::mutex mu_;
  std::condition_variable cv_;
  std::string stage_;
  std::string printed_stage_;  // the stage of the last plain line (not a terminal)
  bool shown_ = false;         // a line is on the terminal
  bool done_ = false;
  std::thread worker_;
};

}  // namespace gprof::launcher
