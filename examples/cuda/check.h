// Error check shared by the CUDA examples: print the failing call and exit non-zero.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define EXAMPLE_CHECK(call)                                                              \
  do {                                                                                   \
    cudaError_t example_err_ = (call);                                                   \
    if (example_err_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,           \
                   cudaGetErrorString(example_err_));                                    \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)
