/* Where a perf sample's cost to the program goes (bench figure 18d-18g; run by
 * bench/cpu_sampling_bench.py, which compiles it with cc -O2 -fno-omit-frame-pointer).
 *
 *     cpu_sample_cost MODE MILLIONS HZ DEPTH
 *
 * The thread runs MILLIONS million iterations of a floating-point loop (a fixed amount of work)
 * at the bottom of DEPTH nested frame-pointer frames, with one PERF_COUNT_SW_TASK_CLOCK event on itself (user space only, CLOCK_REALTIME
 * stamps, as gprof-run's), in MODE:
 *   none      no event (the peer);
 *   count     the event counts, no sampling: what an event costs at context switches;
 *   ip        sampling every 1/HZ s of CPU time, PERF_SAMPLE_IP | TID | TIME, ring never read;
 *   callchain the same plus PERF_SAMPLE_CALLCHAIN (the kernel's frame-pointer walk).
 * The ring (256 KiB) holds every sample of a short run, so nothing is lost or read: the cost
 * measured is the kernel's (the timer interrupt, the sample's preparation and the callchain
 * walk), on the program's own thread. Prints "CPU_NS <process CPU ns of the work> SAMPLES <n>
 * LOST <n>"; the cost per sample is the CPU added over `none` divided by the samples.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t Ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile double g_sink;

__attribute__((noinline)) static void Spin(uint64_t iterations) {
  double x = 1.0;
  for (uint64_t i = 0; i < iterations; ++i) x = x * 1.0000001 + 1.0 / (x + 3.0);
  g_sink = x;
}

__attribute__((noinline)) static void Nest(int depth, uint64_t iterations) {
  if (depth <= 1) {
    Spin(iterations);
  } else {
    Nest(depth - 1, iterations);
  }
  g_sink += depth; /* not a tail call: each level keeps its frame */
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s none|count|ip|callchain MILLIONS HZ DEPTH\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  const uint64_t iterations = (uint64_t)(atof(argv[2]) * 1e6);
  const uint64_t hz = strtoull(argv[3], NULL, 10);
  const int depth = atoi(argv[4]);
  const long page = sysconf(_SC_PAGESIZE);
  struct perf_event_mmap_page* ring = NULL;
  int fd = -1;
  if (strcmp(mode, "none") != 0) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.exclude_callchain_kernel = 1;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_REALTIME;
    if (strcmp(mode, "count") != 0) {
      attr.sample_period = 1000000000ull / hz;
      attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
      if (strcmp(mode, "callchain") == 0) attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
      attr.sample_max_stack = 33;
    }
    fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0) {
      perror("perf_event_open");
      return 1;
    }
    if (attr.sample_period != 0) {
      void* m = mmap(NULL, (size_t)(64 + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED) {
        perror("mmap");
        return 1;
      }
      ring = m;
    }
  }
  const uint64_t cpu0 = Ns(CLOCK_PROCESS_CPUTIME_ID);
  Nest(depth, iterations);
  const uint64_t cpu = Ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  uint64_t samples = 0, lost = 0;
  if (ring != NULL) {
    const char* data = (const char*)ring + ring->data_offset;
    for (uint64_t at = 0; at < ring->data_head;) {
      const struct perf_event_header* h =
          (const struct perf_event_header*)(data + (at & (ring->data_size - 1)));
      if (h->size == 0) break;
      if (h->type == PERF_RECORD_SAMPLE) ++samples;
      if (h->type == PERF_RECORD_LOST) lost += ((const uint64_t*)h)[2];
      at += h->size;
    }
  }
  printf("CPU_NS %llu SAMPLES %llu LOST %llu\n", (unsigned long long)cpu,
         (unsigned long long)samples, (unsigned long long)lost);
  return 0;
}
