// --cpu-sampling's in-process perf backend (cpu_sampler.h): the fallback where the sampler
// process (cpu_sampler_process.cpp) is refused. The events and rings are cpu_perf_rings.h's; a
// reader thread of gprof-run's, inside the program, moves their samples into the queue.
//
// Rules: StartPerfSampler runs once on the thread that initializes gprof-run (a program thread,
// cold); everything else runs on the reader thread, gprof-run's own, created before the events
// are opened so that it is not sampled. The program's threads run no code of ours: the kernel
// takes each sample in its timer interrupt and writes it into the event's ring; the reader's
// wake-ups (every 10 ms) and ring copies are the program process's CPU time, which the sampler
// process moves out of it.
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

#include "collector/host/cpu_perf_rings.h"
#include "collector/host/cpu_sample_queue.h"
#include "collector/host/cpu_sampler.h"

namespace gprof::collector::cpu_sampling_internal {
namespace {

constexpr int kReadEveryMs = 10;

struct PerfSampler {
  PerfRings rings{};
  std::thread reader;
  std::atomic<bool> stop{false};
  std::atomic<int> reader_tid{0};
  std::atomic<bool> go{false};
  pid_t pid = 0;
  uint64_t period_ns = 0;  // each sample's CPU time
};
PerfSampler* g_perf = nullptr;  // created once, never freed

void ReaderMain(PerfSampler* s) {
  s->reader_tid.store(static_cast<int>(::syscall(SYS_gettid)), std::memory_order_release);
  while (!s->go.load(std::memory_order_acquire)) std::this_thread::yield();
  timespec pause{0, kReadEveryMs * 1000000L};
  for (;;) {
    const bool last = s->stop.load(std::memory_order_acquire);
    ReadPerfRings(s->rings, s->pid, s->period_ns, Queue());
    if (last) return;
    ::nanosleep(&pause, nullptr);
  }
}

}  // namespace

bool StartPerfSampler(uint32_t hz, std::string* why) noexcept {
  try {
    auto* s = new PerfSampler;
    s->pid = ::getpid();
    s->period_ns = hz >= 1000000000u ? 1 : 1000000000ull / hz;
    // The reader starts first, with every signal blocked (the program's handlers are not ours to
    // run), and waits: the events below are opened on the threads alive now except it.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    s->reader = std::thread(&ReaderMain, s);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    int reader_tid = 0;
    while ((reader_tid = s->reader_tid.load(std::memory_order_acquire)) == 0) {
      std::this_thread::yield();
    }
    pid_t tids[kMaxPerfEvents];
    const int n = ListThreads(s->pid, reader_tid, tids, kMaxPerfEvents);
    int err_no = 0;
    const PerfRingsError e = n <= 0 ? PerfRingsError::kNoThreads
        : OpenPerfRings(tids, static_cast<size_t>(n),
                        static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_CONF))),
                        ::sysconf(_SC_PAGESIZE), hz, &s->rings, &err_no);
    g_perf = s;
    s->go.store(true, std::memory_order_release);
    if (e != PerfRingsError::kNone) {
      *why = std::string(PerfRingsErrorText(e)) + ": " + std::strerror(err_no);
      StopPerfSampler();
      return false;
    }
    return true;
  } catch (...) {
    *why = "out of memory";
    return false;
  }
}

void StopPerfSampler() noexcept {
  PerfSampler* s = g_perf;
  if (s == nullptr || !s->reader.joinable()) return;
  DisablePerfRings(s->rings);
  s->stop.store(true, std::memory_order_release);
  s->reader.join();  // it reads every ring once more after seeing stop
}

}  // namespace gprof::collector::cpu_sampling_internal
