// CUDA graphs made by stream capture, as torch.compile's CUDA graphs and vLLM's decode loops make
// them: 3 kernels captured on a stream (these launches run nothing and make no GPU record), the
// graph instantiated and replayed R times with cudaGraphLaunch (each replay runs the 3 kernels,
// whose records carry the cudaGraphLaunch's correlation id and their graph node's id).
// Usage: graph_capture [replays]
#include <cstdio>
#include <cstdlib>

#include "check.h"

__global__ void graph_add(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void graph_mul(float* x) { x[threadIdx.x] *= 0.5f; }
__global__ void graph_sub(float* x) { x[threadIdx.x] -= 0.25f; }

int main(int argc, char** argv) {
  const int replays = argc > 1 ? std::atoi(argv[1]) : 5;
  if (replays <= 0) {
    std::fprintf(stderr, "usage: %s [replays > 0]\n", argv[0]);
    return 2;
  }
  float* x = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&x, 32 * sizeof(float)));
  cudaStream_t stream;
  EXAMPLE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  EXAMPLE_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  graph_add<<<1, 32, 0, stream>>>(x);
  graph_mul<<<1, 32, 0, stream>>>(x);
  graph_sub<<<1, 32, 0, stream>>>(x);
  EXAMPLE_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  EXAMPLE_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < replays; ++i) EXAMPLE_CHECK(cudaGraphLaunch(exec, stream));
  EXAMPLE_CHECK(cudaStreamSynchronize(stream));
  EXAMPLE_CHECK(cudaGraphExecDestroy(exec));
  EXAMPLE_CHECK(cudaGraphDestroy(graph));
  EXAMPLE_CHECK(cudaStreamDestroy(stream));
  EXAMPLE_CHECK(cudaFree(x));
  // What the program asked the GPU to do, for checkers (scripts/gpu-check).
  std::printf("kernels=%d graph_launches=%d captured_launches=3 kernels_per_graph=3\n",
              3 * replays, replays);
  std::printf("GPROF_EXAMPLE_DONE graph_capture\n");
  return 0;
}
