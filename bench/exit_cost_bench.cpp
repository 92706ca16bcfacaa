// Figure 6: exit cost. The work the runtime does at exit (collector/runtime.cpp FlushAtExit) on a
// profile of N events (default 1 M: N/2 API calls recorded in a thread buffer + N/2 kernels):
// BuildHostProfile (thread-buffer records -> Profile), adding the drained kernels, then WriteDump
// (temp file + rename) into a directory on disk. Also WriteDump alone. Best of 3, thread CPU time
// (syscalls included; the wall time is printed too).
//   exit_cost_bench [events] [dir]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/bench_profile.h"
#include "collector/host/api_records.h"
#include "collector/host/profile_builder.h"
#include "collector/host/thread_buffer.h"
#include "model/dump.h"

using namespace gprof;

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  bench::LaunchProfileOptions opt;
  opt.launches = n / 2;
  const Profile shape = bench::MakeLaunchProfile(opt);  // the calls and kernels to record
  if (!collector::InitThreadBuffers(1024ull << 20)) return 1;
  const std::string path = dir + "/exit_cost_bench." + std::to_string(getpid()) + ".gpdump";
  double best_exit = 1e30, best_dump = 1e30, best_wall = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    collector::ResetHostRecords();
    for (const ApiCall& c : shape.api_calls) {
      collector::AppendApiRecord(c.start_ns, c.end_ns, c.correlation_id, c.cbid, c.domain,
                                 c.return_code);
    }
    Profile p;
    p.info = shape.info;
    const double w0 = bench::WallSeconds();
    const double t0 = bench::NowSeconds();
    collector::BuildHostProfile(&p, shape.info.end_ns);
    // What DrainGpu merges: kernels, their launch configs, names and devices.
    p.launch_configs = shape.launch_configs;
    p.devices = shape.devices;
    p.kernels = shape.kernels;
    const std::string name = std::string(shape.strings.Get(shape.kernels.front().name));
    const StringId id = p.strings.Intern(name);
    for (Kernel& k : p.kernels) k.name = id;
    std::string error = WriteDump(p, path);
    const double t1 = bench::NowSeconds();
    best_wall = std::min(best_wall, bench::WallSeconds() - w0);
    if (!error.empty() || p.api_calls.size() != shape.api_calls.size()) {
      std::fprintf(stderr, "exit path failed: %s (%zu api calls)\n", error.c_str(), p.api_calls.size());
      return 1;
    }
    error = WriteDump(p, path);
    const double t2 = bench::NowSeconds();
    best_exit = std::min(best_exit, t1 - t0);
    best_dump = std::min(best_dump, t2 - t1);
    std::remove(path.c_str());
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f ms", best_exit * 1e3);
  bench::PrintFigure("6", "exit: build profile + dump of " + std::to_string(n / 1000) + "k events (CPU)",
                     buf, "<= 100 ms", best_exit <= 0.1 ? "PASS" : "FAIL");
  std::snprintf(buf, sizeof(buf), "%.1f ms", best_wall * 1e3);
  bench::PrintFigure("6c", "same, wall time (shared machine)", buf, "-", "INFO");
  std::snprintf(buf, sizeof(buf), "%.1f ms", best_dump * 1e3);
  bench::PrintFigure("6b", "WriteDump alone", buf, "-", "INFO");
  return 0;
}
