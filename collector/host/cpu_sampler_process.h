// What the program and its CPU sampler process (gprof-cpu-sampler, cpu_sampler_main.cpp) say to
// each other (docs/CPU_SAMPLING.md, "process").
//
// The program starts it as
//     gprof-cpu-sampler PID HZ CONTROL_FD ANSWER_FD QUEUE_FD QUEUE_SLOTS REFUSE
// with three inherited descriptors: CONTROL_FD, a pipe's read end (the program writes one byte,
// "go", once it has named the sampler its ptracer; closing it stops the sampler); ANSWER_FD, a
// pipe's write end (the sampler writes one StartAnswer once its events are open or refused, and
// its close tells the program that the sampler has exited); QUEUE_FD, the memfd of the sample
// queue (cpu_sample_queue.h) with QUEUE_SLOTS slots. REFUSE 1: answer as the kernel would refuse
// (GPROF_CPU_SAMPLER_PROCESS=refuse).
#pragma once

#include <cstdint>

namespace gprof::collector::cpu_sampling_internal {

// Slots of the sample queue: 65536 of 288 bytes (18 MiB), 65 s of one busy thread at 1 kHz
// between two profile builds; whole runs build a segment every GPROF_SEGMENT_SECONDS.
inline constexpr uint64_t kCpuSampleQueueSlots = uint64_t{1} << 16;

// The sampler's file name, next to libgprof_inject.so.
inline constexpr const char* kCpuSamplerExe = "gprof-cpu-sampler";

struct StartAnswer {
  int32_t error;   // PerfRingsError (cpu_perf_rings.h)
  int32_t err_no;  // the errno of the call that failed
};

// The sampler process's wake-up period: it copies the rings into the queue this often.
inline constexpr int kSamplerReadEveryMs = 10;

}  // namespace gprof::collector::cpu_sampling_internal
