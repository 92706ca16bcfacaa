// One CUDA program per findings pattern (docs/FINDINGS.md), for findings_patterns_test: each mode
// runs steps inside NVTX ranges "ProfilerStep#N" (the findings' window) and makes one pattern.
// Everything is allocated before the first step, so no mode has a cold start but `cold`.
// Kernel times come from the stand-in's knobs (CUDASIM_KERNEL_NS, set by the test) there, and
// from spin_kernel's clock64() loop on a real GPU (its `us` argument), so that the same binary
// makes the same patterns on both.
// Usage: patterns MODE   (compute overhead idle sync pageable serial overlap spread short cold
//                          heavy addmm leak churn profiler rank)
// Modes NAME_fixed are the same program with the pattern's usual fix, for the predicted-versus-
// measured savings table (scripts/savings-table): idle_fixed launches before loading the next
// batch, sync_fixed reads the result once after the loop, pageable_fixed copies from pinned
// memory, serial_fixed runs the kernel on a second stream beside the copy, spread_fixed has no
// slow instance, short_fixed launches one kernel in place of the 20 (fused_kernel), cold_fixed
// has no first-step setup, addmm_fixed has no bias copy, churn_fixed allocates once.
// Mode rank is one rank of a distributed job (RANK, or OMPI_COMM_WORLD_RANK): 8 steps of a 1 ms
// kernel; the rank named by PATTERNS_SLOW_RANK also computes 4 ms on the host in each step; the
// exit status is PATTERNS_EXIT_CODE (default 0) on the rank named by PATTERNS_EXIT_RANK.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "examples/cuda/check.h"

namespace {

// Busy for about `us` microseconds of GPU time (assumes a clock near 1.5-2 GHz; on the stand-in
// the duration is the knob's).
__global__ void spin_kernel(long long us) {
  const long long start = clock64();
  while (clock64() - start < us * 1800) {
  }
}
__global__ void tiny_kernel(float* p) {
  if (threadIdx.x == 0 && blockIdx.x == 0) p[0] += 1.f;
}
// short_fixed's one kernel in place of 20 tiny ones (its stand-in time is a knob of its own).
__global__ void fused_kernel(float* p) {
  if (threadIdx.x == 0 && blockIdx.x == 0) p[0] += 20.f;
}
__global__ void heavy_gemm_kernel(float* p, long long us) {
  const long long start = clock64();
  while (clock64() - start < us * 1800) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0) p[0] += 1.f;
}
__global__ void elementwise_kernel(float* p) {
  if (threadIdx.x == 0 && blockIdx.x == 0) p[0] *= 2.f;
}

void BusyHost(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

struct Step {
  explicit Step(int n) { nvtxRangePushA(("ProfilerStep#" + std::to_string(n)).c_str()); }
  ~Step() { nvtxRangePop(); }
};
struct Range {
  explicit Range(const char* name) { nvtxRangePushA(name); }
  ~Range() { nvtxRangePop(); }
};

constexpr size_t kCopyBytes = 8u << 20;  // 8 MiB

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODE\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  float* dev = nullptr;
  float* dev2 = nullptr;
  float* pinned = nullptr;
  float* scratch = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&dev, kCopyBytes));
  EXAMPLE_CHECK(cudaMalloc(&dev2, kCopyBytes));
  EXAMPLE_CHECK(cudaMalloc(&scratch, 4096));
  EXAMPLE_CHECK(cudaMallocHost(&pinned, kCopyBytes));
  std::memset(pinned, 0, kCopyBytes);
  std::vector<char> pageable(kCopyBytes, 1);
  cudaStream_t a, b;
  EXAMPLE_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  EXAMPLE_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  EXAMPLE_CHECK(cudaDeviceSynchronize());

  if (mode == "compute") {  // the GPU busy all the time: two 20 ms kernels per step, one sync
    for (int s = 0; s < 5; ++s) {
      Step step(s);
      spin_kernel<<<1, 32>>>(20000);
      spin_kernel<<<1, 32>>>(20000);
      EXAMPLE_CHECK(cudaDeviceSynchronize());
    }
  } else if (mode == "overhead") {  // 2 ms of host work per step, two tiny kernels, no sync
    for (int s = 0; s < 100; ++s) {
      Step step(s);
      {
        Range r("host_work");
        BusyHost(2000);
      }
      tiny_kernel<<<1, 32>>>(scratch);
      tiny_kernel<<<1, 32>>>(scratch);
    }
  } else if (mode == "idle" || mode == "idle_fixed") {
    // The GPU waits while the host loads a batch (sleeping, 2 ms); fixed: the kernel is launched
    // first, so the next load overlaps it.
    const bool fixed = mode == "idle_fixed";
    for (int s = 0; s < 10; ++s) {
      Step step(s);
      if (fixed) spin_kernel<<<1, 32>>>(1000);
      {
        Range r("load_batch");
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      if (!fixed) spin_kernel<<<1, 32>>>(1000);
    }
  } else if (mode == "sync" || mode == "sync_fixed") {
    // A 4-byte synchronous DtoH copy after each kernel (.item()); fixed: once, after the loop.
    for (int s = 0; s < 10; ++s) {
      Step step(s);
      spin_kernel<<<1, 32>>>(1000);
      if (mode == "sync_fixed") continue;
      Range r("loss.item");
      float loss = 0;
      EXAMPLE_CHECK(cudaMemcpy(&loss, scratch, sizeof loss, cudaMemcpyDeviceToHost));
    }
    if (mode == "sync_fixed") {
      float loss = 0;
      EXAMPLE_CHECK(cudaMemcpy(&loss, scratch, sizeof loss, cudaMemcpyDeviceToHost));
    }
  } else if (mode == "pageable" || mode == "pageable_fixed") {
    // An async HtoD copy from pageable memory per step; fixed: from pinned memory.
    const void* src = mode == "pageable" ? static_cast<const void*>(pageable.data()) : pinned;
    for (int s = 0; s < 10; ++s) {
      Step step(s);
      EXAMPLE_CHECK(cudaMemcpyAsync(dev, src, kCopyBytes, cudaMemcpyHostToDevice, a));
      spin_kernel<<<1, 32, 0, a>>>(300);
      EXAMPLE_CHECK(cudaStreamSynchronize(a));
    }
  } else if (mode == "serial" || mode == "overlap" || mode == "serial_fixed") {
    // serial: pinned copy then kernel on one stream, nothing else running during the copy.
    // overlap: the kernel of the step runs on stream b while the copy runs on stream a.
    // serial_fixed: serial's kernel on stream b beside the copy.
    for (int s = 0; s < 10; ++s) {
      Step step(s);
      if (mode == "overlap") spin_kernel<<<1, 32, 0, b>>>(1000);
      if (mode == "serial_fixed") spin_kernel<<<1, 32, 0, b>>>(300);
      EXAMPLE_CHECK(cudaMemcpyAsync(dev, pinned, kCopyBytes, cudaMemcpyHostToDevice, a));
      if (mode == "serial") spin_kernel<<<1, 32, 0, a>>>(300);
      EXAMPLE_CHECK(cudaDeviceSynchronize());
    }
  } else if (mode == "spread" || mode == "spread_fixed") {
    // One kernel, 30 instances; the 8th is about 4x the others (fixed: it is not).
    for (int s = 0; s < 30; ++s) {
      Step step(s);
      // Stand-in: 256 threads vs 32768 (duration = base + threads x ps); GPU: 10 vs 40 us.
      if (s == 7 && mode == "spread") {
        spin_kernel<<<128, 256>>>(40);
      } else {
        spin_kernel<<<1, 256>>>(10);
      }
      EXAMPLE_CHECK(cudaDeviceSynchronize());
    }
  } else if (mode == "short" || mode == "short_fixed") {
    // 20 tiny kernels per step: each shorter than its launch; fixed: one fused kernel.
    for (int s = 0; s < 10; ++s) {
      Step step(s);
      if (mode == "short_fixed") {
        fused_kernel<<<1, 32>>>(scratch);
      } else {
        for (int k = 0; k < 20; ++k) tiny_kernel<<<1, 32>>>(scratch);
      }
      EXAMPLE_CHECK(cudaDeviceSynchronize());
    }
  } else if (mode == "cold" || mode == "cold_fixed") {
    // The first step sleeps 30 ms before its first launch (fixed: it does not).
    for (int s = 0; s < 6; ++s) {
      Step step(s);
      if (s == 0 && mode == "cold") {
        Range r("first_step_setup");
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
      }
      spin_kernel<<<1, 32>>>(500);
      EXAMPLE_CHECK(cudaDeviceSynchronize());
    }
  } else if (mode == "heavy") {  // cuBLAS-style: an occupancy query before the GEMM's launch
    for (int s = 0; s < 10; ++s) {
      Step step(s);
      {
        Range r("aten::mm");
        int blocks = 0;
        EXAMPLE_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, heavy_gemm_kernel, 256, 0));
        heavy_gemm_kernel<<<1, 256>>>(scratch, 500);
      }
      {
        Range r("aten::add");
        elementwise_kernel<<<1, 256>>>(scratch);
      }
      EXAMPLE_CHECK(cudaDeviceSynchronize());
    }
  } else if (mode == "addmm" || mode == "addmm_fixed") {
    // addmm's bias: a DtoD copy into the output, then the GEMM (fixed: no copy, fused bias).
    for (int s = 0; s < 10; ++s) {
      Step step(s);
      Range r("aten::addmm");
      if (mode == "addmm") {
        EXAMPLE_CHECK(cudaMemcpyAsync(dev2, dev, 4u << 20, cudaMemcpyDeviceToDevice, 0));
      }
      heavy_gemm_kernel<<<1, 256>>>(dev2, 500);
      EXAMPLE_CHECK(cudaDeviceSynchronize());
    }
  } else if (mode == "leak") {  // each step keeps a 2 MiB allocation made in "forward"
    std::vector<float*> kept;
    for (int s = 0; s < 8; ++s) {
      Step step(s);
      Range r("forward");
      float* p = nullptr;
      EXAMPLE_CHECK(cudaMalloc(&p, 2u << 20));
      kept.push_back(p);
      tiny_kernel<<<1, 32>>>(p);
      EXAMPLE_CHECK(cudaDeviceSynchronize());
    }
    for (float* p : kept) EXAMPLE_CHECK(cudaFree(p));
  } else if (mode == "churn" || mode == "churn_fixed") {
    // Each step allocates and frees three 1 MiB buffers (fixed: allocated once, before).
    const bool fixed = mode == "churn_fixed";
    float* kept[3] = {};
    for (float*& p : kept) {
      if (fixed) EXAMPLE_CHECK(cudaMalloc(&p, 1u << 20));
    }
    for (int s = 0; s < 8; ++s) {
      Step step(s);
      Range r("scratch");
      for (float* k : kept) {
        float* p = k;
        if (!fixed) EXAMPLE_CHECK(cudaMalloc(&p, 1u << 20));
        tiny_kernel<<<1, 32>>>(p);
        if (!fixed) EXAMPLE_CHECK(cudaFree(p));
      }
    }
    EXAMPLE_CHECK(cudaDeviceSynchronize());
    for (float* p : kept) {
      if (fixed) EXAMPLE_CHECK(cudaFree(p));
    }
  } else if (mode == "profiler") {  // 2,000 tiny kernels: many activity buffers (and drops)
    for (int s = 0; s < 10; ++s) {
      Step step(s);
      for (int k = 0; k < 200; ++k) tiny_kernel<<<1, 32>>>(scratch);
      EXAMPLE_CHECK(cudaDeviceSynchronize());
    }
  } else if (mode == "rank") {
    const char* rank_env = std::getenv("RANK") ? std::getenv("RANK")
                                               : std::getenv("OMPI_COMM_WORLD_RANK");
    const int rank = rank_env != nullptr ? std::atoi(rank_env) : -1;
    const char* slow = std::getenv("PATTERNS_SLOW_RANK");
    const bool is_slow = slow != nullptr && std::atoi(slow) == rank;
    for (int s = 0; s < 8; ++s) {
      Step step(s);
      if (is_slow) {
        Range r("extra_host_work");
        BusyHost(4000);
      }
      spin_kernel<<<1, 32>>>(1000);
      EXAMPLE_CHECK(cudaDeviceSynchronize());
    }
    const char* exit_rank = std::getenv("PATTERNS_EXIT_RANK");
    const char* exit_code = std::getenv("PATTERNS_EXIT_CODE");
    if (exit_rank != nullptr && exit_code != nullptr && std::atoi(exit_rank) == rank) {
      std::printf("GPROF_EXAMPLE_DONE patterns rank %d exits %s\n", rank, exit_code);
      std::fflush(stdout);
      std::exit(std::atoi(exit_code));
    }
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  EXAMPLE_CHECK(cudaStreamDestroy(a));
  EXAMPLE_CHECK(cudaStreamDestroy(b));
  EXAMPLE_CHECK(cudaFreeHost(pinned));
  EXAMPLE_CHECK(cudaFree(scratch));
  EXAMPLE_CHECK(cudaFree(dev2));
  EXAMPLE_CHECK(cudaFree(dev));
  std::printf("GPROF_EXAMPLE_DONE patterns %s\n", mode.c_str());
  return 0;
}
