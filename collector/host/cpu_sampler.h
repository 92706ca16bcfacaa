// --cpu-sampling (GPROF_CPU_SAMPLING, docs/CPU_SAMPLING.md): periodic native stack samples of
// the program's threads, like nsys's --sample=cpu.
//
// Three backends, one queue (cpu_sample_queue.h), tried in this order:
//  - process (cpu_sampler_process.cpp): a sampler process outside the program opens one
//    perf_event_open task-clock event per thread alive at start, inherited by the threads they
//    create (cpu_perf_rings.h); the kernel writes each sample (IP, pid/tid, time, frame-pointer
//    callchain) into the sampler's rings, and the sampler copies them into the queue, which is
//    shared memory. The program's threads pay only the kernel's sample interrupt.
//  - perf (cpu_sampler_perf.cpp): the same events and rings, read by a reader thread inside the
//    program, where the sampler process may not read the program (ptrace access, Yama).
//  - timer (cpu_sampler_timer.cpp): where perf_event_open is refused (perf_event_paranoid,
//    seccomp in containers) or GPROF_CPU_SAMPLING_BACKEND=timer: ITIMER_PROF, whose SIGPROF the
//    kernel sends to the thread that used the CPU; the handler unwinds with libgcc's
//    _Unwind_Backtrace (.eh_frame) into the queue.
//
// Threads: Start runs once at init and Stop once before the last profile build (cold, the
// caller's thread). TakeCpuSamples runs in profile builds (flush_mutex held).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "config/config.h"
#include "model/profile.h"

namespace gprof::collector {

class CpuSampleQueue;

// Cold. Logs one warning and leaves sampling off when no backend starts.
void StartCpuSampling(const Config& config) noexcept;
// Cold: no sample is taken after it returns (the timer is stopped, the perf reader or the
// sampler process has read its rings one last time).
void StopCpuSampling() noexcept;
// In a fork child of the program (one thread, no lock): lets go of the parent's sampler process.
void ForgetCpuSamplingInForkChild() noexcept;

// Cold: moves the samples taken since the last call into `profile` (cpu_samples and
// cpu_sample_counters), each stack interned through `intern` (pcs, depth) -> stack index.
using StackInterner = std::function<uint32_t(const uint64_t* pcs, uint32_t depth)>;
void TakeCpuSamples(Profile* profile, const StackInterner& intern);

namespace cpu_sampling_internal {
CpuSampleQueue& Queue();
// Each backend: true when it started; `why` says why not.
// `exe`: the gprof-cpu-sampler executable (cpu_sampler_process.h).
bool StartProcessSampler(uint32_t hz, bool refuse_for_test, const std::string& exe,
                         std::string* why) noexcept;
void StopProcessSampler() noexcept;
void ForgetProcessSamplerInForkChild() noexcept;
bool StartPerfSampler(uint32_t hz, std::string* why) noexcept;
void StopPerfSampler() noexcept;
bool StartTimerSampler(uint32_t hz, std::string* why) noexcept;
void StopTimerSampler() noexcept;
}  // namespace cpu_sampling_internal

}  // namespace gprof::collector
