// --cpu-sampling's perf_event_open rings (docs/CPU_SAMPLING.md), shared by the two perf
// backends: the sampler process (cpu_sampler_process.cpp) and the in-process reader thread
// (cpu_sampler_perf.cpp).
//
// Rules: everything here uses fixed arrays and raw system calls only (no allocation, no lock,
// no stdio), because the sampler process runs it right after a clone() of a multithreaded
// program, where another thread may have held malloc's lock. OpenPerfRings runs once, cold;
// ReadPerfRings runs on the one thread that owns the rings.
//
// Events: PERF_COUNT_SW_TASK_CLOCK with sample_period = 1e9 / hz ns of the thread's CPU time,
// user space only (exclude_kernel: perf_event_paranoid 2 allows that much to a process on itself
// and on a process it may ptrace-read), stamped with CLOCK_REALTIME (use_clockid, CUPTI's clock),
// one per (thread alive at start, CPU), with inherit so that threads they create later are
// sampled too (the kernel writes an inherited event's samples to its parent's buffer). Per CPU
// and not per thread alone: the kernel refuses to mmap an inherited per-task event that counts on
// every CPU (perf_mmap: all children would write to one ring), as `perf record` knows; the events
// of one CPU share the ring of the first (PERF_EVENT_IOC_SET_OUTPUT). Samples of forked children
// (inherit follows fork too) are told apart by pid and left out. The user callchain is the
// kernel's frame-pointer walk: exact for the sampled PC, and through frames built with frame
// pointers; a function built without them may lose its callers.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace gprof::collector {

class CpuSampleQueue;

namespace cpu_sampling_internal {

// Most events opened (threads at start x CPUs): file descriptors are the program's too (in
// process) or the sampler process's.
inline constexpr size_t kMaxPerfEvents = 512;

struct PerfRing {
  int fd;
  perf_event_mmap_page* header;
  size_t data_size;
};

struct PerfRings {
  PerfRing rings[kMaxPerfEvents];  // one per CPU that has one
  size_t n_rings;
  int followers[kMaxPerfEvents];  // events writing into one of `rings`
  size_t n_followers;
};

// Why OpenPerfRings failed (with the errno of the call that did).
enum class PerfRingsError : int32_t { kNone = 0, kOpen, kMmap, kTooManyEvents, kNoThreads };

// The Linux tids of `pid`'s threads (/proc/PID/task), `except` left out; at most `max`. Raw
// getdents64: no allocation. Returns how many, or -errno.
int ListThreads(pid_t pid, pid_t except, pid_t* out, size_t max);

// Opens the events on `tids` and maps their rings into `*out` (zeroed by the caller). On failure
// closes what it opened and sets `*err_no`.
PerfRingsError OpenPerfRings(const pid_t* tids, size_t n_tids, int cpus, long page_size,
                             uint32_t hz, PerfRings* out, int* err_no);

// Moves every sample of `pid`'s threads from the rings into `queue`, each standing for
// `period_ns` of CPU time; lost records are counted as dropped.
void ReadPerfRings(const PerfRings& rings, pid_t pid, uint64_t period_ns, CpuSampleQueue& queue);

// Stops every event (no sample after it returns); the rings stay mapped for a last read.
void DisablePerfRings(const PerfRings& rings);

// One sentence for a log line: what failed and why.
const char* PerfRingsErrorText(PerfRingsError e);

}  // namespace cpu_sampling_internal
}  // namespace gprof::collector
