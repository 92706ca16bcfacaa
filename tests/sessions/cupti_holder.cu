// A CUDA program that holds CUPTI itself, as a program running under another profiler does: it
// subscribes to CUPTI under the name "nsys" at start, then serves until STOP_FILE exists.
// `gprof-run attach` must refuse it, naming the holder. Usage: cupti_holder STOP_FILE.
// Prints "cupti_holder: subscribed=1 launches=N". Test-only (links nothing of gprof-run).
#include <cupti.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "examples/cuda/check.h"

__global__ void held_kernel() {}

namespace {
void CUPTIAPI Callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string stop = argv[1];
  EXAMPLE_CHECK(cudaFree(nullptr));  // CUDA up
  CUpti_SubscriberHandle subscriber = nullptr;
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "nsys";
  const bool subscribed = cuptiSubscribe_v2(&subscriber, &Callback, nullptr, &params) ==
                          CUPTI_SUCCESS;
  std::FILE* ready = std::fopen((stop + ".ready").c_str(), "w");
  if (ready != nullptr) std::fclose(ready);
  long launches = 0;
  while (access(stop.c_str(), F_OK) != 0) {
    held_kernel<<<1, 1>>>();
    EXAMPLE_CHECK(cudaDeviceSynchronize());
    ++launches;
    usleep(1000);
  }
  std::printf("cupti_holder: subscribed=%d launches=%ld\n", subscribed ? 1 : 0, launches);
  return 0;
}
