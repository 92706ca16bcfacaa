// nvtx_training: looks like a training loop to a profiler. Usage: nvtx_training [steps] (default 5)
//
// Main thread, per step N: ProfilerStep#N { forward { }, backward { allreduce (domain
// "gprof.example") }, optimizer.step (registered string) }. A data-loader thread runs one
// load_batch range per step; a logger thread puts one mark "log" per step and one domain mark
// "checkpoint" at the end. Both threads are named with nvtxNameOsThread. An "epoch" start/end
// range covers the whole loop. Busy-work keeps every range's time above zero.
// Prints "GPROF_EXAMPLE_DONE nvtx_training" last.
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

void BusyWork(int microseconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(microseconds);
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 1000; ++i) sink = sink + i * 0.5;
  }
}

uint32_t Tid() { return static_cast<uint32_t>(::syscall(SYS_gettid)); }

nvtxEventAttributes_t Attributes() {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  nvtxDomainHandle_t domain = nvtxDomainCreateA("gprof.example");
  nvtxStringHandle_t optimizer_name = nvtxDomainRegisterStringA(nullptr, "optimizer.step");
  nvtxNameOsThreadA(Tid(), "main");

  std::thread loader([steps] {
    nvtxNameOsThreadA(Tid(), "data-loader");
    for (int i = 0; i < steps; ++i) {
      nvtxRangePushA("load_batch");
      BusyWork(300);
      nvtxRangePop();
    }
  });
  std::thread logger([steps, domain] {
    nvtxNameOsThreadA(Tid(), "logger");
    for (int i = 0; i < steps; ++i) {
      nvtxMarkA("log");
      BusyWork(200);
    }
    nvtxEventAttributes_t a = Attributes();
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "checkpoint";
    nvtxDomainMarkEx(domain, &a);
  });

  const nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
  for (int step = 0; step < steps; ++step) {
    char name[64];
    std::snprintf(name, sizeof name, "ProfilerStep#%d", step);
    nvtxRangePushA(name);
    nvtxRangePushA("forward");
    BusyWork(500);
    nvtxRangePop();
    nvtxRangePushA("backward");
    BusyWork(400);
    nvtxEventAttributes_t a = Attributes();
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "allreduce";
    nvtxDomainRangePushEx(domain, &a);
    BusyWork(200);
    nvtxDomainRangePop(domain);
    nvtxRangePop();
    nvtxEventAttributes_t opt = Attributes();
    opt.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    opt.message.registered = optimizer_name;
    nvtxRangePushEx(&opt);
    BusyWork(300);
    nvtxRangePop();
    nvtxRangePop();  // ProfilerStep#N
  }
  nvtxRangeEnd(epoch);
  loader.join();
  logger.join();
  std::printf("GPROF_EXAMPLE_DONE nvtx_training\n");
  return 0;
}
