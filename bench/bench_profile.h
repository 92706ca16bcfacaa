// Synthetic profiles for the benchmarks (not in-process code): what a launch loop of N kernels
// looks like after collection, one runtime launch call + one kernel per launch, with realistic
// ids, times (ns jitter, ~5 us apart) and a kernel name of the given length.
#pragma once

#include <cstdint>
#include <string>

#include "model/profile.h"

namespace gprof::bench {

struct LaunchProfileOptions {
  uint64_t launches = 1'000'000;
  std::string kernel_name = "matmul(float const*, float const*, float*, int)";
  uint32_t pid = 123456;  // a typical 6-digit Linux pid; the host thread uses the same id
};

Profile MakeLaunchProfile(const LaunchProfileOptions& options);

// CPU seconds used by the calling thread (CLOCK_THREAD_CPUTIME_ID). The benchmarks time with
// this, not wall time: this machine is shared (2 cores, other engineers compiling), and wall time
// there mostly measures how long the thread waited for a core.
double NowSeconds();
// Wall seconds (CLOCK_MONOTONIC), for figures that include waiting on the disk.
double WallSeconds();

// One result line that bench/run-all collects:
//   FIGURE|<id>|<what>|<measured>|<target>|<PASS/FAIL/INFO>
void PrintFigure(const std::string& id, const std::string& what, const std::string& measured,
                 const std::string& target, const char* verdict);

}  // namespace gprof::bench
