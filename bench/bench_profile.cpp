// Synthetic launch profiles and result printing for the benchmarks (see bench_profile.h).
#include "bench/bench_profile.h"
#include "tests/support/sample_device.h"

#include <cstdio>
#include <ctime>

namespace gprof::bench {

Profile MakeLaunchProfile(const LaunchProfileOptions& o) {
  Profile p;
  p.info.pid = o.pid;
  p.info.program = "launch_loop";
  p.info.command_line = "launch_loop " + std::to_string(o.launches);
  p.info.hostname = "bench";
  p.info.gpu_status = "collected";
  const uint64_t t0 = 1'764'000'000'000'000'000ull;  // late 2025, CLOCK_REALTIME ns
  p.info.start_ns = t0;
  p.devices.push_back(testing::SampleHopperDevice(&p, "NVIDIA H200", 150ull << 30));
  LaunchConfig lc{};
  lc.grid[0] = 528; lc.grid[1] = 1; lc.grid[2] = 1;
  lc.block[0] = 256; lc.block[1] = 1; lc.block[2] = 1;
  lc.registers_per_thread = 64;
  lc.static_shared_bytes = 49152;
  lc.context_id = 1;
  p.launch_configs.push_back(lc);
  const StringId kname = p.strings.Intern(o.kernel_name);
  p.api_names.push_back({505, ApiDomain::kRuntime, 0, p.strings.Intern("__cudaLaunchKernel")});
  p.api_calls.reserve(o.launches);
  p.kernels.reserve(o.launches);
  uint64_t host = t0 + 1'000'000;  // host clock
  uint64_t gpu = host;             // GPU stream clock
  uint32_t seed = 12345;
  const auto jitter = [&seed](uint32_t range) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % range;
  };
  for (uint64_t i = 0; i < o.launches; ++i) {
    const uint32_t corr = static_cast<uint32_t>(i + 100);
    ApiCall c{};
    c.start_ns = host;
    c.end_ns = host + 2'000 + jitter(3'000);
    c.correlation_id = corr;
    c.tid = o.pid;
    c.cbid = 505;
    c.domain = ApiDomain::kRuntime;
    p.api_calls.push_back(c);
    Kernel k{};
    k.start_ns = std::max(gpu, c.end_ns + 1'000 + jitter(500));
    k.end_ns = k.start_ns + 3'000 + jitter(2'000);
    k.correlation_id = corr;
    k.name = kname;
    k.launch_config = 0;
    k.stream_id = 7;
    p.kernels.push_back(k);
    gpu = k.end_ns + 500;
    host = c.end_ns + 500 + jitter(1'000);
  }
  p.info.end_ns = std::max(host, gpu) + 1'000;
  return p;
}

namespace {
double Seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

double NowSeconds() { return Seconds(CLOCK_THREAD_CPUTIME_ID); }
double WallSeconds() { return Seconds(CLOCK_MONOTONIC); }

void PrintFigure(const std::string& id, const std::string& what, const std::string& measured,
                 const std::string& target, const char* verdict) {
  std::printf("FIGURE|%s|%s|%s|%s|%s\n", id.c_str(), what.c_str(), measured.c_str(),
              target.c_str(), verdict);
  std::fflush(stdout);
}

}  // namespace gprof::bench
