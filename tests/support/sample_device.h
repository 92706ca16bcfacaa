// A Hopper-class DeviceInfo (132 SMs, compute 9.0, the H200's per-SM limits) for synthetic
// profiles in tests and benchmarks. Test-only.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/profile.h"

namespace gprof::testing {

inline DeviceInfo SampleHopperDevice(Profile* p, std::string_view name, uint64_t global_mem) {
  DeviceInfo dev{};
  dev.id = 0;
  dev.name = p->strings.Intern(name);
  dev.total_global_mem = global_mem;
  dev.compute_major = 9;
  dev.num_sms = 132;
  dev.max_threads_per_block = 1024;
  dev.max_threads_per_sm = 2048;
  dev.max_registers_per_block = 65536;
  dev.max_registers_per_sm = 65536;
  dev.max_shared_memory_per_block = 49152;
  dev.max_shared_memory_per_sm = 233472;
  dev.warp_size = 32;
  return dev;
}

}  // namespace gprof::testing
