// The program the ptrace injector's tests attach to (launcher/ptrace_inject_test.cpp). It reads
// commands from stdin, one a line, with read(2) itself (so a test can see it blocked in read) and
// answers each on stdout, flushed (so a test knows where it is). Everything it prints depends only
// on the commands, so a run with an injection in the middle must print the same as one without.
// It never retries an interrupted read or nanosleep: a syscall that an injection failed to restart
// shows up as a line on stderr and a non-zero exit.
//   work N     N thousand rounds of FNV-1a, prints the hash
//   sleep MS   one nanosleep; prints "ok", or "SHORT" if it returned before MS ms had passed
//   thread     starts a thread that counts attach_target_ticks (exported for the probe)
//   quit       prints its counters and exits 0
// SIGUSR1 (SA_RESTART) is counted; SIGTERM keeps its default action.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long attach_target_ticks;  // read by the probe through dlsym(RTLD_DEFAULT)
static volatile sig_atomic_t usr1_count;
static unsigned long commands, work_rounds, sleeps;

static void OnUsr1(int sig) {
  (void)sig;
  ++usr1_count;
}

static void* Ticker(void* unused) {
  (void)unused;
  for (;;) {
    __atomic_add_fetch(&attach_target_ticks, 1, __ATOMIC_RELAXED);
    struct timespec ts = {0, 200 * 1000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static char in_buf[4096];
static size_t in_len;

// One line without its newline; exits on a read error or the end of input.
static void ReadLine(char* line, size_t size) {
  for (;;) {
    char* nl = memchr(in_buf, '\n', in_len);
    if (nl != NULL) {
      size_t n = (size_t)(nl - in_buf);
      if (n >= size) n = size - 1;
      memcpy(line, in_buf, n);
      line[n] = '\0';
      in_len -= (size_t)(nl + 1 - in_buf);
      memmove(in_buf, nl + 1, in_len);
      return;
    }
    if (in_len == sizeof(in_buf)) in_len = 0;  // an over-long line: drop it
    ssize_t got = read(0, in_buf + in_len, sizeof(in_buf) - in_len);
    if (got < 0) {
      fprintf(stderr, "attach_target: read: %s\n", strerror(errno));
      exit(3);
    }
    if (got == 0) {
      fprintf(stderr, "attach_target: end of input before quit\n");
      exit(6);
    }
    in_len += (size_t)got;
  }
}

static long long NowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnUsr1;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  printf("attach_target ready\n");
  fflush(stdout);
  for (;;) {
    char line[256];
    ReadLine(line, sizeof(line));
    ++commands;
    unsigned long n = 0;
    if (sscanf(line, "work %lu", &n) == 1) {
      unsigned long long h = 1469598103934665603ULL;
      for (unsigned long i = 0; i < n * 1000; ++i) h = (h ^ (i & 0xff)) * 1099511628211ULL;
      work_rounds += n;
      printf("work %lu %016llx\n", n, h);
    } else if (sscanf(line, "sleep %lu", &n) == 1) {
      struct timespec req = {(time_t)(n / 1000), (long)(n % 1000) * 1000000L};
      long long start = NowMs();
      if (nanosleep(&req, NULL) != 0) {
        fprintf(stderr, "attach_target: nanosleep: %s\n", strerror(errno));
        exit(4);
      }
      ++sleeps;
      printf("slept %lu %s\n", n, NowMs() - start >= (long long)n ? "ok" : "SHORT");
    } else if (strcmp(line, "thread") == 0) {
      pthread_t t;
      if (pthread_create(&t, NULL, Ticker, NULL) != 0) {
        fprintf(stderr, "attach_target: pthread_create failed\n");
        exit(7);
      }
      printf("thread started\n");
    } else if (strcmp(line, "quit") == 0) {
      printf("commands=%lu work=%lu sleeps=%lu usr1=%d\n", commands, work_rounds, sleeps,
             (int)usr1_count);
      return 0;
    } else {
      fprintf(stderr, "attach_target: unknown command '%s'\n", line);
      exit(5);
    }
    fflush(stdout);
  }
}
