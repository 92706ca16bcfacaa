// Calls that make no GPU record of their own, each in a step of its own (a step ends with a
// step_end kernel launch on stream u, so `--step kernel:step_end` cuts one window per step):
//   empty-copies  STEPS steps of: 2 work kernels, a 0-byte cudaMemcpy, a 0-byte cudaMemsetAsync,
//                 a 64-byte cudaMemcpyHostToHost, step_end.
//   capture-other-thread  step 0: a Relaxed-mode capture of stream s, into which another thread
//                 launches captured_kernel (captured: no record); steps 1-2: a replay of the
//                 graph each (one captured_kernel record under the cudaGraphLaunch).
//   capture-other-stream  step 0: while the main thread captures s (Relaxed), it launches
//                 long_kernel into the non-capturing stream t (it runs and has a record; make it
//                 long with CUDASIM_KERNEL_NS so that it is still running when the step ends);
//                 step 1: a replay.
//   graph-exit-unsynced  3 replays of a graph of one long_kernel, then exit at once, without
//                 synchronizing: the replays' records (not awaited: graph launches) are still
//                 running or queued when the exit flush runs.
// Usage: calls_without_records MODE [STEPS=3] (STEPS: empty-copies only). Prints
// "GPROF_EXAMPLE_DONE calls_without_records".
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "examples/cuda/check.h"

__global__ void work_kernel() {}
__global__ void captured_kernel() {}
__global__ void long_kernel() {}
__global__ void step_end() {}

namespace {

cudaStream_t g_u;

void EndStep() { step_end<<<1, 32, 0, g_u>>>(); }

int EmptyCopies(int steps) {
  char* dev = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&dev, 64));
  char host_a[64] = {1}, host_b[64] = {};
  for (int i = 0; i < steps; ++i) {
    work_kernel<<<1, 32>>>();
    work_kernel<<<1, 32>>>();
    EXAMPLE_CHECK(cudaMemcpy(dev, host_a, 0, cudaMemcpyHostToDevice));
    EXAMPLE_CHECK(cudaMemsetAsync(dev, 0, 0, g_u));
    EXAMPLE_CHECK(cudaMemcpy(host_b, host_a, sizeof host_a, cudaMemcpyHostToHost));
    EndStep();
  }
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  EXAMPLE_CHECK(cudaFree(dev));
  return host_b[0] == 1 ? 0 : 1;
}

// Begins a Relaxed capture of `s`, runs `inside` (the captured and uncaptured launches), ends it
// and returns the instantiated graph.
template <typename Fn>
cudaGraphExec_t Capture(cudaStream_t s, Fn inside) {
  cudaGraph_t graph;
  EXAMPLE_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  inside();
  EXAMPLE_CHECK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  EXAMPLE_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  EXAMPLE_CHECK(cudaGraphDestroy(graph));
  return exec;
}

int CaptureOtherThread() {
  cudaStream_t s;
  EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t exec = Capture(s, [&] {
    std::thread([&] { captured_kernel<<<1, 32, 0, s>>>(); }).join();
  });
  EndStep();
  for (int i = 0; i < 2; ++i) {
    EXAMPLE_CHECK(cudaGraphLaunch(exec, s));
    EndStep();
  }
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  EXAMPLE_CHECK(cudaGraphExecDestroy(exec));
  return 0;
}

int CaptureOtherStream() {
  cudaStream_t s, t;
  EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  EXAMPLE_CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
  cudaGraphExec_t exec = Capture(s, [&] {
    long_kernel<<<1, 32, 0, t>>>();
    captured_kernel<<<1, 32, 0, s>>>();
  });
  EndStep();
  EXAMPLE_CHECK(cudaGraphLaunch(exec, s));
  EndStep();
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  EXAMPLE_CHECK(cudaGraphExecDestroy(exec));
  return 0;
}

int GraphExitUnsynced() {
  cudaStream_t s;
  EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t exec = Capture(s, [&] { long_kernel<<<1, 32, 0, s>>>(); });
  for (int i = 0; i < 3; ++i) EXAMPLE_CHECK(cudaGraphLaunch(exec, s));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 3;
  EXAMPLE_CHECK(cudaStreamCreateWithFlags(&g_u, cudaStreamNonBlocking));
  int rc = 2;
  if (std::strcmp(mode, "empty-copies") == 0) rc = EmptyCopies(steps);
  if (std::strcmp(mode, "capture-other-thread") == 0) rc = CaptureOtherThread();
  if (std::strcmp(mode, "capture-other-stream") == 0) rc = CaptureOtherStream();
  if (std::strcmp(mode, "graph-exit-unsynced") == 0) rc = GraphExitUnsynced();
  if (rc == 2) {
    std::fprintf(stderr, "usage: %s empty-copies|capture-other-thread|capture-other-stream|"
                 "graph-exit-unsynced [steps]\n", argv[0]);
  }
  if (rc == 0) std::printf("GPROF_EXAMPLE_DONE calls_without_records\n");
  return rc;
}
