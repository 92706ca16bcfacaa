// fault_prog MODE [ARG]: one hostile program behaviour per mode, for fault_matrix_test
// (docs/RELIABILITY.md). Every mode does the same CUDA work (Work: a kernel and a copy round trip
// inside an NVTX range "step", three times) and prints only what does not depend on the pid or
// the clock, so that its stdout with and without gprof-run can be compared byte for byte. The
// exit status is FAULT_PROG_EXIT (default 0) unless the mode says otherwise.
//   work                 Work, exit
//   exec-chain N         Work, then fork + exec `fault_prog exec-chain N-1` and wait (N+1 processes)
//   exec-replace N       Work, then execv `fault_prog exec-replace N-1` in the same process
//   vfork                Work, vfork + exec `fault_prog work`, wait
//   spawn                Work, posix_spawn `fault_prog work`, wait
//   close-fds            closes every descriptor but stdout before anything else, then Work
//   handlers-early       installs SIGINT/SIGTERM handlers before the first CUDA call, then
//   handlers-late        (or after it) Works until a signal; prints READY first; exit 3
//   underscore-exit      Work, then _exit(4)
//   chdir-umask DIR      Work, chdir(DIR), umask(077), Work
//   remove-outdir        Work, removes $GPROF_OUTPUT_DIR with everything in it, Work
//   hostile-names        NVTX ranges, marks, domains and registered strings with hostile names
//   steps N              N NVTX ranges "ProfilerStep#i" of Work, exit
//   steps-then-kill N    the same, then in step N waits 1.5 s (the windows before are written)
//                        and SIGKILLs itself
//   ready-sleep MS       Work, prints READY, sleeps MS milliseconds, Work
//   many-ranges N        Work, then N NVTX ranges "tiny" (to fill a small host buffer)
#include <cuda_runtime.h>
#include <fcntl.h>
#include <ftw.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <string>
#include <thread>
#include <vector>

#include "examples/cuda/check.h"

extern char** environ;

namespace {

__global__ void scale_kernel(float* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 2.f;
}

// Three steps of a kernel and a copy round trip; returns a checksum of the host data (the
// stand-in does not run kernels, so the checksum covers only what the copies carry back).
double Work() {
  constexpr int kN = 4096;
  std::vector<float> host(kN);
  for (int i = 0; i < kN; ++i) host[i] = static_cast<float>(i % 97);
  float* dev = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&dev, kN * sizeof(float)));
  for (int s = 0; s < 3; ++s) {
    nvtxRangePushA("step");
    EXAMPLE_CHECK(cudaMemcpy(dev, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
    scale_kernel<<<(kN + 255) / 256, 256>>>(dev, kN);
    EXAMPLE_CHECK(cudaMemcpy(host.data(), dev, kN * sizeof(float), cudaMemcpyDeviceToHost));
    nvtxRangePop();
  }
  EXAMPLE_CHECK(cudaFree(dev));
  double sum = 0;
  for (float v : host) sum += v;
  return sum;
}

void Report(const char* what, double sum) {
  std::printf("FAULT_PROG %s %.0f\n", what, sum);
  std::fflush(stdout);
}

int WaitChild(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

volatile sig_atomic_t g_signal = 0;
void OnSignal(int sig) { g_signal = sig; }

void InstallHandlers() {
  struct sigaction sa {};
  sa.sa_handler = &OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) { return remove(path); }

void HostileNames() {
  // Control bytes, invalid UTF-8, format specifiers, a JSON breaker, and a 1 MB name.
  nvtxRangePushA("ctl\x01\x02\x1b[31m\ttab\nnewline");
  nvtxRangePop();
  nvtxRangePushA("bad-utf8 \xff\xfe \xc3 \xe2\x82");
  nvtxRangePop();
  nvtxRangePushA("%s%n%x%p{}{0}%%");
  nvtxRangePop();
  nvtxRangePushA("quote\" backslash\\ </script>");
  nvtxRangePop();
  const std::string huge(1 << 20, 'H');
  nvtxRangePushA(huge.c_str());
  nvtxRangePop();
  nvtxMarkA("%n%n%n mark");
  // Wide strings: the C API takes NUL-terminated wchar_t*, so an embedded NUL ends the name.
  const wchar_t wide[] = {L'w', L'i', L'd', L'e', 0x00e9, L'\0', L'h', L'i', L'd', L'\0'};
  nvtxRangePushW(wide);
  nvtxRangePop();
  const wchar_t surrogate[] = {L'x', static_cast<wchar_t>(0xD800), static_cast<wchar_t>(0x110000),
                               L'y', L'\0'};
  nvtxRangePushW(surrogate);
  nvtxRangePop();
  nvtxDomainHandle_t domain = nvtxDomainCreateA("dom\x01%s\xff");
  nvtxStringHandle_t reg = nvtxDomainRegisterStringA(domain, "registered\x7f%n");
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = reg;
  nvtxDomainRangePushEx(domain, &attr);
  nvtxDomainRangePop(domain);
  nvtxNameOsThreadA(static_cast<uint32_t>(gettid()), "thread\x01%s");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODE [ARG]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const std::string arg = argc > 2 ? argv[2] : "";
  const char* exit_env = std::getenv("FAULT_PROG_EXIT");
  int exit_code = exit_env != nullptr ? std::atoi(exit_env) : 0;

  if (mode == "work") {
    Report("work", Work());
  } else if (mode == "exec-chain" || mode == "exec-replace") {
    const int n = std::atoi(arg.c_str());
    Report((mode + " " + arg).c_str(), Work());
    if (n > 0) {
      const std::string next = std::to_string(n - 1);
      if (mode == "exec-replace") {
        execl(argv[0], argv[0], mode.c_str(), next.c_str(), static_cast<char*>(nullptr));
        return 127;
      }
      const pid_t child = fork();
      if (child == 0) {
        execl(argv[0], argv[0], mode.c_str(), next.c_str(), static_cast<char*>(nullptr));
        _exit(127);
      }
      std::printf("FAULT_PROG exec-chain %d child-status %d\n", n, WaitChild(child));
    }
  } else if (mode == "vfork") {
    Report("vfork-parent", Work());
    const pid_t child = vfork();
    if (child == 0) {
      execl(argv[0], argv[0], "work", static_cast<char*>(nullptr));
      _exit(127);
    }
    std::printf("FAULT_PROG vfork child-status %d\n", WaitChild(child));
  } else if (mode == "spawn") {
    Report("spawn-parent", Work());
    pid_t child = 0;
    char* child_argv[] = {argv[0], const_cast<char*>("work"), nullptr};
    if (posix_spawn(&child, argv[0], nullptr, nullptr, child_argv, environ) != 0) return 126;
    std::printf("FAULT_PROG spawn child-status %d\n", WaitChild(child));
  } else if (mode == "close-fds") {
    for (int fd = 0; fd < 4096; ++fd) {
      if (fd != STDOUT_FILENO) close(fd);
    }
    Report("close-fds", Work());
  } else if (mode == "handlers-early" || mode == "handlers-late") {
    if (mode == "handlers-early") InstallHandlers();
    double sum = Work();
    if (mode == "handlers-late") InstallHandlers();
    std::printf("FAULT_PROG READY\n");
    std::fflush(stdout);
    while (g_signal == 0) {
      sum = Work();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    Report(g_signal == SIGTERM ? "caught-SIGTERM" : "caught-SIGINT", sum);
    exit_code = 3;
  } else if (mode == "underscore-exit") {
    Report("underscore-exit", Work());
    _exit(4);
  } else if (mode == "chdir-umask") {
    Report("before-chdir", Work());
    if (chdir(arg.c_str()) != 0) return 125;
    umask(077);
    Report("after-chdir", Work());
  } else if (mode == "remove-outdir") {
    Report("before-remove", Work());
    const char* dir = std::getenv("GPROF_OUTPUT_DIR");
    if (dir != nullptr) nftw(dir, &RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
    std::printf("FAULT_PROG removed %s\n", access(dir, F_OK) == 0 ? "no" : "yes");
    Report("after-remove", Work());
  } else if (mode == "hostile-names") {
    HostileNames();
    Report("hostile-names", Work());
  } else if (mode == "steps" || mode == "steps-then-kill") {
    const int n = std::atoi(arg.c_str());
    const bool kill = mode == "steps-then-kill";
    for (int s = 0; s < n + (kill ? 1 : 0); ++s) {
      nvtxRangePushA(("ProfilerStep#" + std::to_string(s)).c_str());
      Report("step", Work());
      if (s == n) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        raise(SIGKILL);
      }
      nvtxRangePop();
    }
  } else if (mode == "many-ranges") {
    Report("many-ranges", Work());
    const int n = std::atoi(arg.c_str());
    for (int i = 0; i < n; ++i) {
      nvtxRangePushA("tiny");
      nvtxRangePop();
    }
  } else if (mode == "ready-sleep") {
    Report("before-sleep", Work());
    std::printf("FAULT_PROG READY\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(arg.c_str())));
    Report("after-sleep", Work());
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  std::printf("FAULT_PROG done\n");
  return exit_code;
}
