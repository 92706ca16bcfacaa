// A long-running CUDA "service" for on-demand capture (gprof-run --start-paused, then
// gprof-run capture; docs/ATTACH.md): it serves requests until told to stop, each request an
// NVTX range "request#N" around one kernel launch and (by default) a stream synchronize, and
// counts them itself so a capture can be checked against its own numbers.
// Usage: service [--sync-every N] [--cuda-after FILE] STOP_FILE [REQUEST_US [NVTX_FILE]]
//   Serves until STOP_FILE exists (checked between requests), sleeping REQUEST_US (default 200)
//   after each request. With NVTX_FILE, makes no NVTX call until that file exists (a library
//   whose NVTX starts after `gprof-run attach`). --sync-every N: synchronizes after every Nth
//   request only (default 1), so with long kernels the GPU runs behind the host (a busy GPU).
//   --cuda-after FILE: makes no CUDA call until FILE (or STOP_FILE) exists (a process attached to
//   before it starts CUDA).
//   Writes "requests=N" to STOP_FILE.count after every 100 requests and at the end, and prints
//   "service: requests=N kernels=N" and GPROF_EXAMPLE_DONE service.
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "check.h"

__global__ void serve_kernel(int* counter) {
  if (threadIdx.x == 0) atomicAdd(counter, 1);
}

namespace {

void WriteCount(const std::string& path, long requests) {
  const std::string tmp = path + ".tmp";
  if (FILE* f = std::fopen(tmp.c_str(), "w")) {
    std::fprintf(f, "requests=%ld\n", requests);
    std::fclose(f);
    std::rename(tmp.c_str(), path.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  long sync_every = 1;
  std::string cuda_after;
  while (argc > 2 && (std::string(argv[1]) == "--sync-every" ||
                      std::string(argv[1]) == "--cuda-after")) {
    if (std::string(argv[1]) == "--sync-every") {
      sync_every = std::max(1L, std::atol(argv[2]));
    } else {
      cuda_after = argv[2];
    }
    argv[2] = argv[0];
    argv += 2;
    argc -= 2;
  }
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s [--sync-every N] [--cuda-after FILE] STOP_FILE [REQUEST_US "
                 "[NVTX_FILE]]\n",
                 argv[0]);
    return 2;
  }
  const std::string stop = argv[1];
  while (!cuda_after.empty() && access(cuda_after.c_str(), F_OK) != 0 &&
         access(stop.c_str(), F_OK) != 0) {
    usleep(1000);
  }
  const int pause_us = argc > 2 ? std::atoi(argv[2]) : 200;
  const std::string nvtx_file = argc > 3 ? argv[3] : "";
  bool nvtx = nvtx_file.empty();
  int* counter = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&counter, sizeof(int)));
  EXAMPLE_CHECK(cudaMemset(counter, 0, sizeof(int)));
  long requests = 0;
  while (access(stop.c_str(), F_OK) != 0) {
    if (!nvtx && requests % 100 == 0) nvtx = access(nvtx_file.c_str(), F_OK) == 0;
    if (nvtx) nvtxRangePushA(("request#" + std::to_string(requests)).c_str());
    serve_kernel<<<1, 32>>>(counter);
    if ((requests + 1) % sync_every == 0) EXAMPLE_CHECK(cudaStreamSynchronize(0));
    if (nvtx) nvtxRangePop();
    ++requests;
    if (requests % 100 == 0) WriteCount(stop + ".count", requests);
    if (pause_us > 0) usleep(static_cast<useconds_t>(pause_us));
  }
  WriteCount(stop + ".count", requests);
  EXAMPLE_CHECK(cudaFree(counter));
  std::printf("service: requests=%ld kernels=%ld\n", requests, requests);
  std::printf("GPROF_EXAMPLE_DONE service\n");
  return 0;
}
