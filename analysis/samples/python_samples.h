// The Python sampler's file, <program>.<pid>.pysamples (docs/PYTHON_SAMPLING.md; written by
// python/gprof_run_hook/_gprof_run_sampler.py at the program's exit, next to its dump): the
// reader, and the folded stacks (Brendan Gregg's flame graph input) made from it. Launcher
// process only.
//
// The file is untrusted input (the program could have written anything there): the reader checks
// every line, count, index and number, and rejects a file that fails with one message saying
// where; it never indexes past what it read and never trusts a declared count for memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gprof {

inline constexpr char kPythonSamplesExtension[] = ".pysamples";
inline constexpr char kPythonSamplesFormat[] = "gprof-pysamples";
// Version 2 adds the header lines "sampler" and "torn" after "program"; version 1 is still read
// (sampler "in-process", torn 0).
inline constexpr uint32_t kPythonSamplesVersion = 2;
inline constexpr uint32_t kPythonSamplingMaxHz = 2000;
// Deeper stacks are refused (CPython's default recursion limit is 1000).
inline constexpr size_t kPythonMaxStackDepth = 100000;

struct PythonThread {
  uint32_t tid = 0;     // Linux tid (threading's native_id); 0: not known (a thread not started
                        // through threading)
  uint64_t ident = 0;   // Python's thread ident
  std::string name;     // threading's name, "" when not known
};

struct PythonFrame {
  std::string file;
  std::string function;
  uint32_t first_line = 0;  // the function's first line (co_firstlineno)
  uint32_t line = 0;        // the line running when sampled
};

struct PythonSample {
  uint64_t ts_ns;   // CLOCK_REALTIME, absolute
  uint32_t thread;  // into PythonSamples::threads
  uint32_t stack;   // into PythonSamples::stacks
};

struct PythonSamples {
  uint32_t pid = 0;
  std::string program;
  std::string sampler = "in-process";  // "out-of-process" (without the GIL) or "in-process"
  uint64_t torn = 0;      // thread stacks dropped: the program changed them while they were read
  uint32_t hz = 0;
  uint64_t period_ns = 0;
  uint64_t start_ns = 0;  // sampler start and end (CLOCK_REALTIME)
  uint64_t end_ns = 0;
  uint64_t ticks = 0;     // deadlines at which samples were taken
  uint64_t missed = 0;    // deadlines skipped (the sampler got the GIL or the CPU too late)
  uint64_t dropped = 0;   // samples past the sampler's cap
  std::vector<PythonThread> threads;
  std::vector<PythonFrame> frames;
  std::vector<std::vector<uint32_t>> stacks;  // frame indices, root first
  std::vector<PythonSample> samples;          // in the file's order (time order as written)
};

// Parses a whole file's text. False, with `error` saying what and where ("line 12: ..."), for
// anything but a complete, consistent version-1 or version-2 file.
bool ParsePythonSamples(std::string_view text, PythonSamples* out, std::string* error);
// Reads and parses `path` (at most kPythonSamplesMaxFileBytes). `error` names the file.
inline constexpr uint64_t kPythonSamplesMaxFileBytes = uint64_t{4} << 30;
bool ReadPythonSamples(const std::string& path, PythonSamples* out, std::string* error);

// Folded stacks of the samples with from_ns <= ts <= to_ns: one line per distinct stack,
// "frame;frame;frame count\n", root first, frames as "function (file:first_line)" (a function,
// whichever of its lines ran), lines sorted by text. ';' and control characters inside names are
// replaced (';' by ':'), so every line splits back into its frames. `counted`: samples used.
std::string FoldedStacks(const PythonSamples& s, uint64_t from_ns, uint64_t to_ns,
                         uint64_t* counted = nullptr);

}  // namespace gprof
