// Port of the articles' matmul + bias example (torch.add(torch.matmul(x, w), b), eager) to CUDA
// C++: each step runs a tiled matmul kernel and a bias-add kernel inside NVTX ranges
// "ProfilerStep#N" and "matmul_add". Size 64 is overhead-bound, size 4096 compute-bound.
// Usage: matmul_bias <size> [steps=10]
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"

constexpr int kTile = 16;

__global__ void matmul_kernel(const float* x, const float* w, float* y, int n) {
  __shared__ float xs[kTile][kTile];
  __shared__ float ws[kTile][kTile];
  int row = blockIdx.y * kTile + threadIdx.y;
  int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < n; t += kTile) {
    xs[threadIdx.y][threadIdx.x] = (row < n && t + threadIdx.x < n) ? x[row * n + t + threadIdx.x] : 0.f;
    ws[threadIdx.y][threadIdx.x] = (col < n && t + threadIdx.y < n) ? w[(t + threadIdx.y) * n + col] : 0.f;
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += xs[threadIdx.y][k] * ws[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) y[row * n + col] = acc;
}

__global__ void bias_add_kernel(float* y, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n * n) y[i] += b[i % n];
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <size> [steps]\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]);
  const int steps = argc > 2 ? std::atoi(argv[2]) : 10;
  if (n <= 0 || steps <= 0) {
    std::fprintf(stderr, "size and steps must be positive\n");
    return 2;
  }
  const size_t elems = size_t(n) * n;
  std::vector<float> x(elems), w(elems), b(n), y(elems);
  for (size_t i = 0; i < elems; ++i) {
    x[i] = float(i % 7) * 0.25f;
    w[i] = float(i % 5) * 0.5f;
  }
  for (int i = 0; i < n; ++i) b[i] = float(i % 3);

  float *dx, *dw, *db, *dy;
  EXAMPLE_CHECK(cudaMalloc(&dx, elems * sizeof(float)));
  EXAMPLE_CHECK(cudaMalloc(&dw, elems * sizeof(float)));
  EXAMPLE_CHECK(cudaMalloc(&db, n * sizeof(float)));
  EXAMPLE_CHECK(cudaMalloc(&dy, elems * sizeof(float)));
  EXAMPLE_CHECK(cudaMemcpy(dx, x.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  EXAMPLE_CHECK(cudaMemcpy(dw, w.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  EXAMPLE_CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  const dim3 block(kTile, kTile);
  const dim3 grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
  const int threads = 256;
  const int blocks = int((elems + threads - 1) / threads);
  for (int step = 0; step < steps; ++step) {
    nvtxRangePushA(("ProfilerStep#" + std::to_string(step)).c_str());
    nvtxRangePushA("matmul_add");
    matmul_kernel<<<grid, block>>>(dx, dw, dy, n);
    EXAMPLE_CHECK(cudaGetLastError());
    bias_add_kernel<<<blocks, threads>>>(dy, db, n);
    EXAMPLE_CHECK(cudaGetLastError());
    nvtxRangePop();
    EXAMPLE_CHECK(cudaDeviceSynchronize());
    nvtxRangePop();
  }
  EXAMPLE_CHECK(cudaMemcpy(y.data(), dy, elems * sizeof(float), cudaMemcpyDeviceToHost));
  double expected = b[0];
  for (int k = 0; k < n; ++k) expected += double(x[k]) * w[size_t(k) * n];
  std::printf("matmul_bias: size=%d steps=%d y[0]=%g (expected %g on a real GPU)\n", n, steps,
              double(y[0]), expected);

  EXAMPLE_CHECK(cudaFree(dx));
  EXAMPLE_CHECK(cudaFree(dw));
  EXAMPLE_CHECK(cudaFree(db));
  EXAMPLE_CHECK(cudaFree(dy));
  std::printf("kernels=%d copies=4 memsets=0\n", 2 * steps);
  std::printf("GPROF_EXAMPLE_DONE matmul_bias\n");
  return 0;
}
