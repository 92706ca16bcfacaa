// lifecycle_prog MODE: small NVTX programs for the lifecycle tests. Each mode prints
// "GPROF_LIFECYCLE <mode> ..." lines the test checks (pids of children, readiness).
//   basic      push/pop "outer" { "inner" } twice, a mark, exit 0
//   unbalanced a pop without a push, then "left-open" pushed and never popped, exit 0
//   fork       "parent-before"; fork (child: push/pop "child-range", exit(0) through atexit);
//              wait; "parent-after"; exit 0
//   exec       "parent-range"; fork + exec of `lifecycle_prog basic`; wait; exit 0
//   wait       "before-signal" pushed/popped, then "waiting" pushed; prints READY; sleeps until a
//              signal ends it
//   exit-early "before-exit" pushed, then _exit(3)
//   crash      "before-crash" pushed, then SIGSEGV (a null write)
//   no-nvtx    never calls NVTX, exit 0
//   threads-churn N [steps]
//              N threads over the run, started and joined in waves of kChurnWave; each pushes
//              "churn", marks "churn-mark" inside it and pops. With `steps`, the main thread
//              pushes "ProfilerStep#W" around wave W (and marks "ProfilerStep#<waves>" after the
//              last, ending it), for schedule windows. Prints "threads=N distinct_tids=K".
//   threads-concurrent T
//              T threads started together through a barrier; each runs kConcurrentRounds rounds
//              of "conc-outer" { "conc-inner" { mark "conc-mark" } "conc-inner" }. Prints
//              "threads=T distinct_tids=K rounds=R".
//   threads-busy T exit|wait [steps]
//              T detached threads loop on "busy" { mark "busy-mark" } with a short sleep in
//              between, until the process ends; READY once each has recorded. Then `exit`
//              returns from main (the exit flush runs while they record), `wait` sleeps until a
//              signal ends it (the signal flush runs while they record). With `steps` the main
//              thread marks "ProfilerStep#S" every 10 ms meanwhile (20 steps, then exit or go on).
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

void Range(const char* name) {
  nvtxRangePushA(name);
  usleep(1000);
  nvtxRangePop();
}

int WaitChild(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

constexpr int kChurnWave = 100;
constexpr int kConcurrentRounds = 200;

uint32_t Tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

size_t Distinct(std::vector<uint32_t> tids) {
  std::sort(tids.begin(), tids.end());
  return static_cast<size_t>(std::unique(tids.begin(), tids.end()) - tids.begin());
}

void ThreadsChurn(int n, bool steps) {
  std::vector<uint32_t> tids(static_cast<size_t>(n));
  int wave = 0;
  for (int first = 0; first < n; first += kChurnWave, ++wave) {
    const std::string step = "ProfilerStep#" + std::to_string(wave);
    if (steps) nvtxRangePushA(step.c_str());
    std::vector<std::thread> threads;
    for (int i = first; i < std::min(n, first + kChurnWave); ++i) {
      threads.emplace_back([&tids, i] {
        tids[static_cast<size_t>(i)] = Tid();
        nvtxRangePushA("churn");
        nvtxMarkA("churn-mark");
        nvtxRangePop();
      });
    }
    for (std::thread& t : threads) t.join();
    if (steps) nvtxRangePop();
  }
  if (steps) nvtxMarkA(("ProfilerStep#" + std::to_string(wave)).c_str());
  std::printf("GPROF_LIFECYCLE threads-churn threads=%d distinct_tids=%zu\n", n, Distinct(tids));
}

void ThreadsConcurrent(int n) {
  std::vector<uint32_t> tids(static_cast<size_t>(n));
  std::barrier start(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      tids[static_cast<size_t>(i)] = Tid();
      start.arrive_and_wait();
      for (int r = 0; r < kConcurrentRounds; ++r) {
        nvtxRangePushA("conc-outer");
        nvtxRangePushA("conc-inner");
        nvtxMarkA("conc-mark");
        nvtxRangePop();
        nvtxRangePushA("conc-inner");
        nvtxRangePop();
        nvtxRangePop();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::printf("GPROF_LIFECYCLE threads-concurrent threads=%d distinct_tids=%zu rounds=%d\n", n,
              Distinct(tids), kConcurrentRounds);
}

// Counts threads that have recorded once. Static and trivially destructible: the busy threads
// still read it while exit() tears the program down.
std::atomic<int> g_busy_started{0};

void Busy() {
  for (bool counted = false;;) {
    nvtxRangePushA("busy");
    nvtxMarkA("busy-mark");
    nvtxRangePop();
    if (!counted) {
      g_busy_started.fetch_add(1);
      counted = true;
    }
    usleep(200);  // a blocking call, where sanitizer runtimes deliver signals
  }
}

void ThreadsBusy(int n, bool exit_when_ready, bool steps) {
  for (int i = 0; i < n; ++i) std::thread(Busy).detach();
  while (g_busy_started.load() < n) usleep(1000);
  std::printf("GPROF_LIFECYCLE threads-busy READY threads=%d\n", n);
  std::fflush(stdout);
  for (int step = 0; steps && (step < 20 || !exit_when_ready); ++step) {
    nvtxMarkA(("ProfilerStep#" + std::to_string(step)).c_str());
    usleep(10000);
  }
  if (!exit_when_ready) {
    for (;;) pause();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "basic";
  if (mode == "basic") {
    for (int i = 0; i < 2; ++i) {
      nvtxRangePushA("outer");
      Range("inner");
      nvtxRangePop();
    }
    nvtxMarkA("basic-mark");
  } else if (mode == "unbalanced") {
    nvtxRangePop();
    nvtxRangePushA("left-open");
    usleep(1000);
  } else if (mode == "fork") {
    Range("parent-before");
    std::fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
      Range("child-range");
      std::exit(0);  // runs atexit handlers: the child must still write nothing
    }
    std::printf("GPROF_LIFECYCLE fork child=%d status=%d\n", child, WaitChild(child));
    Range("parent-after");
  } else if (mode == "exec") {
    Range("parent-range");
    std::fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
      execl(argv[0], argv[0], "basic", static_cast<char*>(nullptr));
      _exit(127);
    }
    std::printf("GPROF_LIFECYCLE exec child=%d status=%d\n", child, WaitChild(child));
  } else if (mode == "wait") {
    Range("before-signal");
    nvtxRangePushA("waiting");
    std::printf("GPROF_LIFECYCLE wait READY\n");
    std::fflush(stdout);
    for (;;) pause();
  } else if (mode == "exit-early") {
    nvtxRangePushA("before-exit");
    std::fflush(stdout);
    _exit(3);
  } else if (mode == "crash") {
    nvtxRangePushA("before-crash");
    std::fflush(stdout);
    // A real segfault, not a null store: UBSan (sanitizer builds) would report that first.
    volatile int* unmapped = reinterpret_cast<volatile int*>(uintptr_t{8});
    *unmapped = 1;
  } else if (mode == "no-nvtx") {
    // nothing
  } else if (mode == "threads-churn" && argc > 2) {
    ThreadsChurn(std::atoi(argv[2]), argc > 3 && std::string(argv[3]) == "steps");
  } else if (mode == "threads-busy" && argc > 3) {
    ThreadsBusy(std::atoi(argv[2]), std::string(argv[3]) == "exit",
                argc > 4 && std::string(argv[4]) == "steps");
  } else if (mode == "threads-concurrent" && argc > 2) {
    ThreadsConcurrent(std::atoi(argv[2]));
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  std::printf("GPROF_LIFECYCLE %s done\n", mode.c_str());
  return 0;
}
