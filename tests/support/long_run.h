// A long run's dump written in segments with model/SegmentedDumpWriter, its numbers simple
// enough to work out by hand (tests of the segmented render: launcher/render/segmented_render.h).
// Test-only.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "model/dump.h"
#include "tests/support/sample_device.h"

namespace gprof::testing {

inline constexpr uint64_t kLongRunT0 = 1'700'000'000'000'000'000ull;
inline constexpr uint64_t kLongRunUs = 1000;
inline constexpr uint64_t kLongRunSegmentNs = 10'000 * kLongRunUs;  // each segment covers 10 ms

// `segments` segments of `launches` launches each, thread 7, segment s starting at
// kLongRunT0 + s * 10 ms (times below in us after that):
//   a range "step" [10, 9990] holding the launches: cudaLaunchKernel i at [20 + 3i, 21 + 3i],
//   its kernel "k_a" [22 + 3i, 24 + 3i] (2 us) on stream 7 - the last launch's kernel is stored
//   in the next segment (in flight when the collector cut), but in the last segment;
//   an outer range "epoch" [kLongRunT0 + 1 us, end of the last segment - 1 us], stored in the last
//   segment (it closed there): it holds every step;
//   in segment 1, a kernel "k_lost" [5, 10] whose launch was never recorded (correlation 999999);
//   with `cpu_samples`, two --cpu-sampling samples of thread 7 per segment, at 100 and 200, of
//   1 ms of CPU each, in one two-frame stack (segment 0 adds it; no module names its PCs);
//   with `syncs`, a cudaDeviceSynchronize [500, 600] per segment.
inline std::string WriteLongRun(const std::string& dir, uint32_t segments, uint32_t launches,
                                bool cpu_samples = false, bool syncs = false) {
  const std::string path = dir + "/long.4242.gpdump";
  SegmentedDumpWriter w;
  EXPECT_EQ(w.Open(path), "");
  Profile run;
  run.info.pid = 4242;
  run.info.program = "long";
  run.info.hostname = "testhost";
  run.info.start_ns = kLongRunT0;
  run.info.gpu_status = "collected";
  run.threads.push_back({7, run.strings.Intern("main")});
  run.devices.push_back(SampleHopperDevice(&run, "Test GPU", 80ull << 30));
  run.api_names.push_back({211, ApiDomain::kRuntime, 0, run.strings.Intern("cudaLaunchKernel")});
  run.api_names.push_back(
      {165, ApiDomain::kRuntime, 0, run.strings.Intern("cudaDeviceSynchronize")});
  LaunchConfig lc{};
  lc.grid[0] = lc.grid[1] = lc.grid[2] = 1;
  lc.block[0] = 32, lc.block[1] = lc.block[2] = 1;
  run.launch_configs.push_back(lc);
  const StringId k_a = run.strings.Intern("k_a");
  const StringId step = run.strings.Intern("step");
  std::vector<Kernel> in_flight;
  uint32_t id = 0;
  for (uint32_t s = 0; s < segments; ++s) {
    const uint64_t b = kLongRunT0 + s * kLongRunSegmentNs;
    const bool last = s + 1 == segments;
    run.kernels = std::move(in_flight);
    in_flight.clear();
    run.ranges.push_back({b + 10 * kLongRunUs, b + 9990 * kLongRunUs, step, 7, 0, 0, 0});
    for (uint32_t i = 0; i < launches; ++i) {
      const uint64_t at = b + (20 + 3 * i) * kLongRunUs;
      run.api_calls.push_back({at, at + kLongRunUs, ++id, 7, 211, ApiDomain::kRuntime, kApiCallLaunch, 0});
      const Kernel k{at + 2 * kLongRunUs, at + 4 * kLongRunUs, id, k_a, 0, 7};
      (i + 1 == launches && !last ? in_flight : run.kernels).push_back(k);
    }
    if (syncs) {
      const uint64_t at = b + 500 * kLongRunUs;
      run.api_calls.push_back({at, at + 100 * kLongRunUs, 900'000 + s, 7, 165, ApiDomain::kRuntime,
                               0, 0});
    }
    if (cpu_samples) {
      if (s == 0) {
        run.stacks.push_back({0, 2});
        run.stack_pcs = {0x1000, 0x2000};
        run.cpu_sample_counters.hz = 1000;
      }
      run.cpu_samples = {{b + 100 * kLongRunUs, 7, 0, 1'000'000},
                         {b + 200 * kLongRunUs, 7, 0, 1'000'000}};
    }
    if (s == 1) {
      run.kernels.push_back({b + 5 * kLongRunUs, b + 10 * kLongRunUs, 999'999, run.strings.Intern("k_lost"), 0, 7});
    }
    if (last) {
      run.ranges.push_back({kLongRunT0 + kLongRunUs, b + kLongRunSegmentNs - kLongRunUs, run.strings.Intern("epoch"), 7, 0, 0, 0});
    }
    run.info.end_ns = b + kLongRunSegmentNs;
    EXPECT_EQ(w.Append(run, last), "");
    run.ranges.clear(), run.api_calls.clear(), run.kernels.clear(), run.cpu_samples.clear();
  }
  EXPECT_EQ(w.Publish(), "");
  return path;
}

// The .pysamples file of that run (analysis/samples/python_samples.h, as --python-sampling's
// sampler writes it): thread 7 sampled once a millisecond over the whole run, always in
// <module> -> train of long.py.
inline void WriteLongRunPythonSamples(const std::string& dir, uint32_t segments) {
  const uint64_t ms = 1'000'000, samples = segments * kLongRunSegmentNs / ms;
  std::ofstream out(dir + "/long.4242.pysamples");
  out << "gprof-pysamples\t1\npid\t4242\nprogram\tlong\nhz\t1000\nperiod_ns\t1000000\n"
      << "start_ns\t" << kLongRunT0 << "\nend_ns\t" << kLongRunT0 + samples * ms << "\n"
      << "ticks\t" << samples << "\nmissed\t0\ndropped\t0\nthreads\t1\nframes\t2\nstacks\t1\n"
      << "samples\t" << samples << "\nT\t0\t7\t1401\tMainThread\n"
      << "F\t0\t1\t20\t/w/long.py\t<module>\nF\t1\t3\t4\t/w/long.py\ttrain\nK\t0\t0 1\n";
  for (uint64_t k = 0; k < samples; ++k) out << "S\t" << k * ms << "\t0\t0\n";
  out << "end\n";
}

}  // namespace gprof::testing
