// dlclose_prog: a program that loads the CUDA runtime with dlopen, uses it, dlcloses it, and
// does it all again (fault_matrix_test, docs/RELIABILITY.md "dlclose of CUDA"). It links no CUDA
// library, so the dlclose really drops the runtime's last reference; the injection library, once
// the driver has loaded it, must survive that and still write the profile at exit.
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using MallocFn = int (*)(void**, size_t);
using MemcpyFn = int (*)(void*, const void*, size_t, int);
using FreeFn = int (*)(void*);
using SyncFn = int (*)();
constexpr int kHostToDevice = 1, kDeviceToHost = 2;  // cudaMemcpyKind

// One round: dlopen the runtime, copy a buffer there and back, dlclose. Returns the checksum of
// what came back, or -1.
double Round(int round) {
  void* rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
  if (rt == nullptr) {
    std::fprintf(stderr, "dlopen libcudart.so.13: %s\n", dlerror());
    return -1;
  }
  auto cuda_malloc = reinterpret_cast<MallocFn>(dlsym(rt, "cudaMalloc"));
  auto cuda_memcpy = reinterpret_cast<MemcpyFn>(dlsym(rt, "cudaMemcpy"));
  auto cuda_free = reinterpret_cast<FreeFn>(dlsym(rt, "cudaFree"));
  auto cuda_sync = reinterpret_cast<SyncFn>(dlsym(rt, "cudaDeviceSynchronize"));
  if (!cuda_malloc || !cuda_memcpy || !cuda_free || !cuda_sync) return -1;
  nvtxRangePushA(round == 0 ? "round-0" : "round-1");
  std::vector<float> host(1024);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 13 + round);
  void* dev = nullptr;
  int err = cuda_malloc(&dev, host.size() * sizeof(float));
  if (err == 0) err = cuda_memcpy(dev, host.data(), host.size() * sizeof(float), kHostToDevice);
  std::vector<float> back(host.size(), 0.f);
  if (err == 0) err = cuda_memcpy(back.data(), dev, back.size() * sizeof(float), kDeviceToHost);
  if (err == 0) err = cuda_sync();
  if (dev != nullptr) cuda_free(dev);
  nvtxRangePop();
  dlclose(rt);
  if (err != 0) return -1;
  double sum = 0;
  for (float v : back) sum += v;
  return sum;
}

}  // namespace

int main() {
  for (int round = 0; round < 2; ++round) {
    const double sum = Round(round);
    std::printf("DLCLOSE round %d %.0f\n", round, sum);
    if (sum < 0) return 1;
  }
  nvtxMarkA("after-dlclose");
  std::printf("DLCLOSE done\n");
  return 0;
}
