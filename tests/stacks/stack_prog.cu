// Test program for native stacks on CUDA API calls (tests/stacks/stacks_test.cpp): main calls
// outer() -> middle() -> cudaDeviceSynchronize kMiddleSyncs times, and other() ->
// cudaDeviceSynchronize kOtherSyncs times. Built with frame pointers and -g, without
// optimization, and every function noinline, so that each call keeps its own frame.
#include <cuda_runtime.h>

#include <cstdio>

constexpr int kMiddleSyncs = 3;
constexpr int kOtherSyncs = 5;

__global__ void tick(int* p) { *p += 1; }

__attribute__((noinline)) void middle() {
  for (int i = 0; i < kMiddleSyncs; ++i) cudaDeviceSynchronize();
}

__attribute__((noinline)) void outer() { middle(); }

__attribute__((noinline)) void other() {
  for (int i = 0; i < kOtherSyncs; ++i) cudaDeviceSynchronize();
}

int main() {
  int* d = nullptr;
  if (cudaMalloc(&d, sizeof(int)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  tick<<<1, 1>>>(d);
  outer();
  other();
  cudaFree(d);
  std::printf("stack_prog done\n");
  return 0;
}
