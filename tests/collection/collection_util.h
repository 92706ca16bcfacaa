// Helpers for the end-to-end collection tests: run a CUDA example with and without the injection
// library, and read the dump it wrote. Test-only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/profile.h"
#include "tests/support/process.h"

namespace gprof::testing {

struct ProfiledRun {
  ProcessResult process;
  Profile profile;
  bool has_dump = false;
  std::string dump_error;  // why no dump could be read
};

std::string ExamplePath(const std::string& name);  // build/bin/<name>
std::string InjectLibPath();                       // build/lib/libgprof_inject.so

// Environment of a profiled run: injection paths, GPROF_OUTPUT_DIR, plus `extra`.
// `lib_dir` ("" = none) goes first on LD_LIBRARY_PATH (the stand-in's lib dir).
ProcessOptions ProfiledOptions(const std::string& out_dir, const std::string& lib_dir,
                               const std::map<std::string, std::string>& extra);
// The same program without gprof-run (only LD_LIBRARY_PATH and `extra`).
ProcessOptions PlainOptions(const std::string& lib_dir,
                            const std::map<std::string, std::string>& extra);

ProfiledRun RunProfiled(const std::vector<std::string>& argv, const std::string& lib_dir,
                        const std::map<std::string, std::string>& extra, const std::string& tag);

// gprof-run with `schedule` (its schedule options) on `program` (argv) on the stand-in, the
// library's info log on (a window that waits for records says so there; each written window's
// path is logged as it is written), plus `extra` environment. The windows' dumps, by cycle.
struct LauncherRun {
  ProcessResult process;
  std::vector<Profile> windows;
};
LauncherRun RunLauncherWindows(const std::vector<std::string>& schedule,
                               const std::vector<std::string>& program, const std::string& tag,
                               const std::map<std::string, std::string>& extra = {});

// Name of an API call (from Profile::api_names) or "".
std::string ApiNameOf(const Profile& p, const ApiCall& call);
bool IsLaunchName(const std::string& name);  // __cudaLaunchKernel, cudaLaunchKernel, cuLaunchKernel...

// Lines of `text` containing `needle`.
int CountLines(const std::string& text, const std::string& needle);

}  // namespace gprof::testing

namespace gprof::testing {

// Every kernel, copy and memset appears once and is linked to a recorded API call; every launch
// call launched exactly one kernel; nothing was dropped. GoogleTest assertions inside.
void ExpectEveryGpuRecordLinkedOnce(const Profile& p);

// The training-loop view of the articles: host time spent inside ProfilerStep#N ranges (what the
// loop costs the CPU) and GPU time of the kernels.
uint64_t StepNs(const Profile& p);
uint64_t KernelNs(const Profile& p);
// Records of everything but kernels and CUPTI overhead (copies, memsets, syncs, memory, devices).
uint64_t NonKernelWorkRecords(const Profile& p);

}  // namespace gprof::testing
