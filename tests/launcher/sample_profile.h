// A small but complete Profile (NVTX ranges, a mark, a launch API call, its kernel, a copy) for
// the launcher tests: written with model/dump.h WriteDump so they never depend on the injection
// library. Test-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "model/profile.h"
#include "tests/support/sample_device.h"

namespace gprof::testing {

inline Profile SampleProfile(uint32_t pid, const std::string& program) {
  Profile p;
  p.info.pid = pid;
  p.info.program = program;
  p.info.command_line = program + " --epochs 1";
  p.info.hostname = "testhost";
  const uint64_t t0 = 1'700'000'000'000'000'000ull;
  p.info.start_ns = t0;
  p.info.end_ns = t0 + 10'000'000;
  p.info.gpu_status = "collected";
  p.info.cupti_library = "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13";
  const uint32_t tid = pid;
  p.threads.push_back({tid, p.strings.Intern("main")});
  p.devices.push_back(SampleHopperDevice(&p, "Test GPU", 80ull << 30));
  p.ranges.push_back({t0 + 1'000'000, t0 + 6'000'000, p.strings.Intern("train_step"), tid, 0, 0, 0});
  p.ranges.push_back({t0 + 2'000'000, t0 + 3'000'000, p.strings.Intern("forward"), tid, 0, 0, 0});
  p.marks.push_back({t0 + 4'000'000, p.strings.Intern("checkpoint"), tid, 0, 0, 0});
  p.api_calls.push_back({t0 + 2'100'000, t0 + 2'200'000, 1, tid, 505, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({t0 + 2'300'000, t0 + 2'600'000, 2, tid, 20, ApiDomain::kRuntime, 0, 0});
  p.api_names.push_back({505, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.api_names.push_back({20, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMemcpyAsync")});
  LaunchConfig lc{};
  lc.grid[0] = 128; lc.grid[1] = 1; lc.grid[2] = 1;
  lc.block[0] = 256; lc.block[1] = 1; lc.block[2] = 1;
  lc.registers_per_thread = 32;
  lc.context_id = 1;
  p.launch_configs.push_back(lc);
  p.kernels.push_back({t0 + 2'250'000, t0 + 2'750'000, 1, p.strings.Intern("_Z6matmulPfS_S_i"), 0,
                       7});
  Memcpy m{};
  m.start_ns = t0 + 2'800'000;
  m.end_ns = t0 + 2'900'000;
  m.bytes = 1 << 20;
  m.correlation_id = 2;
  m.stream_id = 7;
  m.context_id = 1;
  m.kind = CopyKind::kHtoD;
  m.src_kind = MemKind::kPageable;
  m.dst_kind = MemKind::kDevice;
  m.is_async = 1;
  p.memcpys.push_back(m);
  return p;
}

// SampleProfile as rank `rank` of `world_size`, shifted `rank` ms later (every time in it, start
// included), as the ranks of one job start a little apart.
inline Profile RankedSampleProfile(uint32_t pid, const std::string& program, int32_t rank,
                                   int32_t world_size) {
  Profile p = SampleProfile(pid, program);
  p.info.rank = rank;
  p.info.world_size = world_size;
  const uint64_t shift = static_cast<uint64_t>(rank) * 1'000'000;
  p.info.start_ns += shift;
  p.info.end_ns += shift;
  for (HostRange& r : p.ranges) r.start_ns += shift, r.end_ns += shift;
  for (HostMark& m : p.marks) m.ts_ns += shift;
  for (ApiCall& c : p.api_calls) c.start_ns += shift, c.end_ns += shift;
  for (Kernel& k : p.kernels) k.start_ns += shift, k.end_ns += shift;
  for (Memcpy& m : p.memcpys) m.start_ns += shift, m.end_ns += shift;
  return p;
}

// Three consecutive steps (Profile::steps, ProfilerStep#1-3) from 1 ms after the profile's start,
// 10 ms each, or kSlowStepNs each when `slow`: with RankedSampleProfile, rank r's step 1 starts
// r + 1 ms after rank 0's start. The sample's kernel and copy (2.25-2.9 ms) fall in step 1.
inline constexpr uint64_t kSampleStepNs = 10'000'000;
inline constexpr uint64_t kSlowStepNs = 16'000'000;
inline void AddSampleSteps(Profile* p, bool slow) {
  const uint64_t dur = slow ? kSlowStepNs : kSampleStepNs;
  const uint32_t tid = p->info.pid;
  for (uint32_t n = 1; n <= 3; ++n) {
    const uint64_t start = p->info.start_ns + 1'000'000 + (n - 1) * dur;
    p->steps.push_back({start, start + dur, n, tid});
  }
  p->info.end_ns = std::max(p->info.end_ns, p->steps.back().end_ns);
}

}  // namespace gprof::testing
