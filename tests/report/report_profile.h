// A profile for the report.html process and browser tests, written with model/dump.h WriteDump
// (no injection library, no CUDA): three steps on one thread and one stream, a load_batch range,
// allocations, and names that the caller picks (hostile ones for the escaping tests). Times in
// us after t0, as outputs/html/html_report_test.cpp's ThreeSteps (its numbers are derived there):
//   ProfilerStep#0 [0, 10000): load_batch [100, 900), gemm [1000, 3000), bias [3010, 3110)
//   ProfilerStep#1 [10000, 14000): gemm [11000, 12500)
//   ProfilerStep#2 [14000, 18000): gemm [15000, 17500)
// plus 100 MiB allocated at 500 and freed at 9000, 50 MiB at 5000. Test-only.
#pragma once

#include <string>

#include "model/profile.h"
#include "tests/support/sample_device.h"

namespace gprof::testing {

struct ReportNames {
  std::string program = "train";
  std::string command_line = "train --steps 3";
  std::string gemm = "gemm";
  std::string bias = "bias";
  std::string range = "load_batch";
  std::string thread = "main";
  std::string device = "Test GPU";
};

inline Profile ReportProfile(const ReportNames& n, uint32_t pid = 4242) {
  constexpr uint64_t t0 = 1'700'000'000'000'000'000ull, us = 1000;
  Profile p;
  p.info.pid = pid;
  p.info.program = n.program;
  p.info.command_line = n.command_line;
  p.info.hostname = "testhost";
  p.info.start_ns = t0;
  p.info.end_ns = t0 + 18'500 * us;
  p.info.gpu_status = "collected";
  p.info.cupti_library = "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13";
  const uint32_t tid = pid;
  p.threads.push_back({tid, p.strings.Intern(n.thread)});
  p.devices.push_back(SampleHopperDevice(&p, n.device, 80ull << 30));
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  LaunchConfig lc{};
  lc.context_id = 1;
  p.launch_configs.push_back(lc);
  const auto range = [&](uint64_t s, uint64_t e, const std::string& name) {
    p.ranges.push_back({t0 + s * us, t0 + e * us, p.strings.Intern(name), tid, 0, 0, 0});
  };
  const auto launch = [&](uint64_t at, uint64_t s, uint64_t e, uint32_t corr,
                          const std::string& name) {
    p.api_calls.push_back({t0 + at * us, t0 + (at + 5) * us, corr, tid, 211, ApiDomain::kRuntime,
                           0, 0});
    p.kernels.push_back({t0 + s * us, t0 + e * us, corr, p.strings.Intern(name), 0, 7});
  };
  range(0, 10'000, "ProfilerStep#0");
  range(10'000, 14'000, "ProfilerStep#1");
  range(14'000, 18'000, "ProfilerStep#2");
  range(100, 900, n.range);
  launch(900, 1'000, 3'000, 1, n.gemm);
  launch(3'000, 3'010, 3'110, 2, n.bias);
  launch(10'000, 11'000, 12'500, 3, n.gemm);
  launch(14'000, 15'000, 17'500, 4, n.gemm);
  const auto memory = [&](uint64_t at, uint64_t address, uint64_t bytes, MemoryOpKind kind) {
    MemoryOp m{};
    m.ts_ns = t0 + at * us;
    m.address = address;
    m.bytes = bytes;
    m.op = kind;
    m.stream_id = 0xffffffffu;
    p.memory_ops.push_back(m);
  };
  memory(500, 0x1000, 100ull << 20, MemoryOpKind::kAlloc);
  memory(5'000, 0x2000, 50ull << 20, MemoryOpKind::kAlloc);
  memory(9'000, 0x1000, 0, MemoryOpKind::kFree);
  return p;
}

// Every name hostile: markup that would run script if it reached the page unescaped, quotes
// that would end an attribute, invalid UTF-8 and control bytes.
inline ReportNames HostileNames() {
  const std::string evil =
      "</script><script>document.title='PWNED'</script><img src=x "
      "onerror=\"document.title='PWNED'\">\"'\xff\xfe\x01";
  ReportNames n;
  n.program = evil;
  n.command_line = evil + " --flag";
  n.gemm = "gemm" + evil;
  n.bias = "bias" + evil;
  n.range = evil;
  n.thread = evil;
  n.device = evil;
  return n;
}

}  // namespace gprof::testing
