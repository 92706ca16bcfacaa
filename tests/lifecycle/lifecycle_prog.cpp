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
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  std::printf("GPROF_LIFECYCLE %s done\n", mode.c_str());
  return 0;
}
