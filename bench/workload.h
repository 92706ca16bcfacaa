// The realistic workload of the "-mixed" benchmark figures (not in-process code). The best-case
// figures (bench_profile.h MakeLaunchProfile) use one kernel name, one launch configuration, one
// thread and one stream, so every cache in the decoder, the drain and the exporters always hits.
// This is what a PyTorch training step looks like to the collector instead:
//   - 300 distinct kernel names, valid Itanium manglings of the shapes ATen, cuBLAS, CUTLASS and
//     flash-attention produce (70-330 characters; trace_export_bench checks they demangle),
//   - 50 launch configurations (grid/block/registers/shared memory), each name mostly with its
//     own one and sometimes another,
//   - 4 host threads (main, autograd, data loader, communication) and 8 streams,
//   - per API call: 78 % kernel launches (a sixth of them through the driver's cuLaunchKernel,
//     as Triton does), 6 % cudaMemcpyAsync, 5 % cudaMemsetAsync, 11 % calls without GPU work
//     (event record/query, stream wait, cudaGetDevice, cudaPeekAtLastError, and a
//     cudaDeviceSynchronize every ~50 calls that waits for every stream).
// The step (1200 calls) repeats with fresh correlation ids and times, as a training loop does.
// Deterministic: the same calls on every run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace gprof::bench {

inline constexpr uint32_t kMixedKernelNames = 300;
inline constexpr uint32_t kMixedLaunchConfigs = 50;
inline constexpr uint32_t kMixedThreads = 4;
inline constexpr uint32_t kMixedStreams = 8;
inline constexpr uint32_t kMixedStepCalls = 1200;

// The 300 kernel names, in a fixed order (index = Kernel::name in a MixedCall).
const std::vector<std::string>& MixedKernelNames();
// The 50 launch configurations (index = Kernel::launch_config in a MixedCall).
const std::vector<LaunchConfig>& MixedLaunchConfigs();

enum class MixedKind : uint8_t { kKernel, kMemcpy, kMemset, kApiOnly };

// One API call and the GPU work it launched. `api.tid` is the thread index (0..3); kernel.name
// and kernel.launch_config index MixedKernelNames() and MixedLaunchConfigs(). GPU records carry
// the API call's correlation id.
struct MixedCall {
  MixedKind kind;
  ApiCall api;
  Kernel kernel;   // kind == kKernel
  Memcpy memcpy;   // kind == kMemcpy
  Memset memset;   // kind == kMemset
};

// Generates the calls one after another.
class MixedCalls {
 public:
  MixedCalls();
  ~MixedCalls();
  MixedCall Next();

 private:
  struct Slot;
  std::vector<Slot> step_;
  uint64_t index_ = 0;
  uint32_t seed_ = 777;
  uint64_t wall_;                          // advances a little per call (threads overlap)
  uint64_t thread_clock_[kMixedThreads];   // end of each thread's last call
  uint64_t stream_clock_[kMixedStreams];   // end of each stream's last GPU record
};

// Names of every (domain, cbid) that MixedCalls emits, interned into `p`.
void AddMixedApiNames(Profile* p);

// A collected profile of `calls` MixedCalls: API calls (tid = pid + thread index: the main
// thread's tid is the pid), kernels, memcpys, memsets, the 300 names, the 50 configurations,
// the API names and one H200.
Profile MakeMixedProfile(uint64_t calls);

// Average length of MixedKernelNames() (for the figure labels).
double MixedKernelNameAverageLength();

}  // namespace gprof::bench
