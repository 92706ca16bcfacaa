// Thread CPU time (issue 31): each program thread's CPU time, read on gprof-run's own thread, so
// that the findings can tell a host thread that computes from one that sleeps or waits, whether
// or not a range was recorded around the work. Nothing is added on the program's threads.
//
// A sampler thread reads /proc/self/task/<tid>/schedstat for every thread of the process (the
// time it ran, and the time it was ready but waited for a CPU: on a loaded machine a thread that
// computes is runnable, not sleeping, even while another process holds the CPU) every
// kThreadCpuPeriodNs (longer with many threads: kThreadCpuPeriodPerThreadNs), and once more whenever a dump, a segment or a window is written and at the
// start and end of the run; where schedstat is missing, the thread's CPU clock
// (clock_gettime on its clock id, no wait time). The samples go into Profile::thread_cpu; the
// analysis interpolates between them at step and window edges (analysis/attribution/
// thread_cpu.h).
//
// Threads: the sampler thread, and the dump writers (flush_mutex held) that take the samples.
// Cold: a lock guards the samples; nothing here runs on a program thread.
#pragma once

#include <cstdint>

#include "model/profile.h"

namespace gprof::collector::lifecycle {

inline constexpr uint64_t kThreadCpuPeriodNs = 10'000'000;  // 10 ms, with up to 20 threads
// With more threads the period grows by this much per thread (a round reads one file per thread,
// a few microseconds each), so a round costs about 1 % of a core however many threads there are:
// 200 threads, a round every 100 ms.
inline constexpr uint64_t kThreadCpuPeriodPerThreadNs = 500'000;
// At most this many samples are held between two dumps (24 MiB); the oldest go first.
inline constexpr size_t kThreadCpuMaxSamples = size_t{1} << 19;

// Starts the sampler (init, signals blocked by the caller) after taking the run's first round on
// the calling thread (once, at init: the only round not on our own thread).
// False when the thread could not start (then no samples are taken; logged).
bool StartThreadCpuSampler();
// Takes a round now and appends the held samples to `p`. `consume`: all of them, and they are
// forgotten (whole runs and segments: each sample goes to one segment). Otherwise (a window from
// `from_ns`): those of the last round at or before `from_ns` on, and the older ones are dropped.
void TakeThreadCpu(Profile* p, bool consume, uint64_t from_ns = 0);
// Exit: stops the sampler thread (after the last TakeThreadCpu). Idempotent.
void StopThreadCpuSampler();

}  // namespace gprof::collector::lifecycle
