// The library the ptrace injector's tests load into attach_target (launcher/ptrace_inject_test.cpp).
// Runs inside the target, on the thread the injector borrowed (its thread group leader); it only
// makes syscalls and reads the target's own exported counter, so it needs nothing from the target.
//
// gprof_attach_probe_entry(arg), arg "MODE:REST":
//   write:PATH     writes PATH: "pid=P\ncall=N\narg=ARG\n" and returns 1000 + N, where N counts
//                  the calls since this library was loaded (a second dlopen of the same file
//                  reuses the loaded copy, so N goes on counting)
//   ticks:PATH     reads attach_target_ticks, sleeps 100 ms, reads it again, writes both to PATH
//                  ("before=B\nafter=A\n"; "no ticks" when the target does not export it)
//   sleep:MS:PATH  creates PATH.started, sleeps MS ms (resuming after a signal), then as write:
//   exit:CODE      _exit(CODE)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int calls;

static void SleepMs(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static int WriteText(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  close(fd);
  return n == (ssize_t)len ? 0 : -1;
}

static int WriteCall(const char* path, const char* arg) {
  char text[8192];
  ++calls;
  snprintf(text, sizeof(text), "pid=%d\ncall=%d\narg=%s\n", (int)getpid(), calls, arg);
  return WriteText(path, text) == 0 ? 1000 + calls : -1;
}

__attribute__((visibility("default"))) int gprof_attach_probe_entry(const char* arg) {
  if (strncmp(arg, "write:", 6) == 0) return WriteCall(arg + 6, arg);
  if (strncmp(arg, "ticks:", 6) == 0) {
    const volatile unsigned long* ticks =
        (const volatile unsigned long*)dlsym(RTLD_DEFAULT, "attach_target_ticks");
    char text[128];
    if (ticks == NULL) {
      snprintf(text, sizeof(text), "no ticks\n");
    } else {
      unsigned long before = __atomic_load_n(ticks, __ATOMIC_RELAXED);
      SleepMs(100);
      unsigned long after = __atomic_load_n(ticks, __ATOMIC_RELAXED);
      snprintf(text, sizeof(text), "before=%lu\nafter=%lu\n", before, after);
    }
    return WriteText(arg + 6, text) == 0 ? 1 : -1;
  }
  if (strncmp(arg, "sleep:", 6) == 0) {
    char* path = NULL;
    long ms = strtol(arg + 6, &path, 10);
    if (path == NULL || *path != ':') return -1;
    ++path;
    char started[4096];
    snprintf(started, sizeof(started), "%s.started", path);
    if (WriteText(started, "started\n") != 0) return -1;
    SleepMs(ms);
    return WriteCall(path, arg);
  }
  if (strncmp(arg, "exit:", 5) == 0) _exit(atoi(arg + 5));
  return -2;
}
